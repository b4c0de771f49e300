/**
 * The Meilisearch adapter of the catalogue port, write side (the indexer's). A build goes:
 *
 * 1. create `<live>_build_<stamp>` with primary key `id`, then apply the settings (before any
 *    document: filterable attributes are empty by default and changing them later re-indexes);
 * 2. send documents as NDJSON in large batches, a couple of tasks in flight at a time;
 * 3. wait for every task (with a timeout) and check that it succeeded: a failed task does not
 *    throw in the client, it only reports `status: 'failed'`;
 * 4. check that the index holds exactly the documents sent;
 * 5. swap it into the live name (rename on the very first run), then delete the old catalogue.
 *
 * Until step 5 nothing touches the live index, and any failure discards the build: readers see
 * the old catalogue or the new one, never a mix. Errors carry the engine's own message.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type EnqueuedTask,
  type Index,
  Meilisearch,
  MeilisearchApiError,
  MeilisearchRequestError,
  MeilisearchRequestTimeOutError,
  MeilisearchTaskTimeOutError,
  type Task,
} from 'meilisearch';
import { CodedError } from '../../coded-error.ts';
import {
  type CatalogueBuilder,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  type Quote,
} from '../port.ts';
import { AUTHORS_SETTINGS, DirectoryCollector, directoryUids, WORKS_SETTINGS } from './authors.ts';
import { networkReason } from './catalogue.ts';
import {
  buildIndexPrefix,
  buildIndexUid,
  createDocumentEncoder,
  type DocumentEncoder,
  ENGINE_ORDER_ID,
  MAX_TOTAL_HITS,
  MEILI_SETTINGS,
  type MeiliQuoteDocument,
} from './request.ts';

/**
 * Documents per batch: large batches index much faster than many small ones. At 25,000 the
 * engine indexed 200k quotes as fast as at 50,000 (docs/benchmarks.md#history).
 */
export const DEFAULT_BATCH_SIZE = 25_000;
/**
 * A batch is also sent once its NDJSON reaches this size, well below the engine's 100 MB payload
 * limit. The batch is written as UTF-8 into one buffer of this size, allocated once outside the
 * JavaScript heap and reused: holding a batch as strings (its lines, then the joined body, then
 * its UTF-8 copy for the request) left the garbage collector up to three large copies per batch to
 * collect, and the indexer's peak RSS grew with the catalogue (470 MB for a million quotes).
 */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;
/** Longest wait for one task; indexing a large batch on a small machine takes minutes. */
export const DEFAULT_TASK_TIMEOUT_MS = 15 * 60_000;
/** Longest single HTTP request (uploading a batch included). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Document tasks enqueued but not yet awaited: enough to keep the engine busy while the next batch is read. */
const MAX_TASKS_IN_FLIGHT = 2;
/** Ids read per request while checking the engine's order of a build's documents. */
export const ORDER_CHECK_PAGE = 50_000;
/** Polling interval while waiting for a task. */
const TASK_POLL_MS = 200;
/**
 * Attempts at a read (a task's state, stats, ids, a version) that failed for a moment, and the
 * pause before the second, doubled before each next: about 3 s in all, so that a proxy's 502 or
 * an engine restarting does not throw a build of minutes away, and an engine that stays away is
 * still reported within seconds.
 */
const READ_ATTEMPTS = 4;
const READ_RETRY_PAUSE_MS = 400;

/**
 * Age past which a build index is taken for one an interrupted run left behind (a second Ctrl-C,
 * a killed process, an engine that went away) and deleted by the next run. No run lasts nearly
 * as long: a million quotes take minutes. A younger one may belong to a run in progress.
 */
export const ABANDONED_BUILD_MS = 24 * 3_600_000;

/**
 * A build's version: when it started (base 36, so that versions of successive builds sort), then
 * random bytes, so that concurrent ones differ.
 */
function newVersion(): string {
  return `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/**
 * When the build of a {@link newVersion} started; undefined for any other text. A swap's marker
 * (`<build>_swapped`) counts as its build: a run stopped while settling its swap leaves it too.
 */
function versionStartedAt(version: string): number | undefined {
  const match = /^([0-9a-z]{1,12})-[0-9a-f]{8}(?:_swapped)?$/.exec(version);
  return match === null ? undefined : Number.parseInt(match[1] as string, 36);
}

export interface MeiliBuilderOptions {
  host: string;
  /** A key allowed to create, configure, fill, swap and delete indexes and read tasks (admin scope). */
  apiKey: string | undefined;
  /** Live index uid. */
  index: string;
  logger?: CatalogueLogger;
  /** Documents per batch, default {@link DEFAULT_BATCH_SIZE}. */
  batchSize?: number;
  /** NDJSON bytes per batch, default {@link MAX_BATCH_BYTES}; a larger document is sent alone. */
  maxBatchBytes?: number;
  /** Longest wait for one engine task, default {@link DEFAULT_TASK_TIMEOUT_MS}. */
  taskTimeoutMs?: number;
  /** Longest single HTTP request, default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number;
  /**
   * The index's `searchCutoffMs`: the service's `MEILI_TIMEOUT_MS`, so that a search the service
   * stopped waiting for stops in the engine too. Default: the one in {@link MEILI_SETTINGS}.
   */
  searchCutoffMs?: number;
}

/**
 * Starts a build: creates the build index and applies the settings. Rejects (with nothing left
 * behind) when the engine is unreachable or refuses the key.
 */
export async function createMeiliBuilder(options: MeiliBuilderOptions): Promise<CatalogueBuilder> {
  const builder = new MeiliBuilder(options);
  try {
    await builder.start();
  } catch (error) {
    await builder.abort().catch(() => {});
    throw error;
  }
  return builder;
}

/**
 * The batch cut, shared with anything that must cut batches exactly as the indexer does: a batch
 * that holds documents ends before one that would carry it past `maxBytes` (the newline that
 * separates it from the line before counts too)...
 */
export function batchEndsBefore(documents: number, bytes: number, size: number, maxBytes: number): boolean {
  return documents > 0 && bytes + 1 + size > maxBytes;
}

/** ...and ends once it holds `batchSize` documents. */
export function batchIsFull(documents: number, batchSize: number): boolean {
  return documents >= batchSize;
}

/** An engine task that ended in another state than `succeeded`, with the engine's reason. */
export class MeiliTaskError extends CodedError {
  override name = 'MeiliTaskError';
  readonly code = 'engine_task_failed';
  /** The task ended (failed or canceled), rather than the wait for it giving up. */
  readonly ended: boolean;

  constructor(message: string, options?: ErrorOptions & { ended?: boolean }) {
    super(message, options);
    this.ended = options?.ended ?? false;
  }
}

/** Another run swapped its catalogue in while this one was building: this build is not swapped in. */
export class MeiliConcurrentRunError extends CodedError {
  override name = 'MeiliConcurrentRunError';
  readonly code = 'concurrent_run';
}

class MeiliBuilder implements CatalogueBuilder {
  readonly #options: MeiliBuilderOptions;
  readonly #client: Meilisearch;
  readonly #version: string;
  readonly #buildUid: string;
  readonly #build: Index<MeiliQuoteDocument>;
  readonly #encode: DocumentEncoder;
  readonly #batchSize: number;
  readonly #maxBatchBytes: number;
  readonly #taskTimeoutMs: number;
  /** The batch being gathered, as NDJSON bytes; allocated with the first document. */
  #body: Buffer | undefined;
  /** The index the batch being gathered goes to. */
  #target: string;
  #bytes = 0;
  #documents = 0;
  #count = 0;
  readonly #inFlight: { taskUid: number; index: string }[] = [];
  #created = false;
  /** Set once the swap succeeded: from then on the build index holds the old catalogue. */
  #swapped = false;
  /**
   * Set when the swap was enqueued but is neither done nor failed: the build index holds the new
   * catalogue or, once the swap runs, the old one. Nothing may then be deleted.
   */
  #swapPending = false;
  #finished = false;
  #aborting: Promise<void> | undefined;
  /** The live catalogue's version when this build started (undefined: none, or one without it). */
  #liveAtStart: string | undefined;
  /** The authors and works of the quotes added, and the uids of their build indexes. */
  readonly #directory = new DirectoryCollector();
  #directoryBuilds: { authors: string; works: string } | undefined;

  constructor(options: MeiliBuilderOptions) {
    this.#options = options;
    this.#client = new Meilisearch({
      host: options.host,
      apiKey: options.apiKey,
      timeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    });
    this.#version = newVersion();
    this.#buildUid = buildIndexUid(options.index, this.#version);
    this.#build = this.#client.index<MeiliQuoteDocument>(this.#buildUid);
    this.#target = this.#buildUid;
    this.#encode = createDocumentEncoder(this.#version);
    this.#batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    this.#maxBatchBytes = options.maxBatchBytes ?? MAX_BATCH_BYTES;
    this.#taskTimeoutMs = options.taskTimeoutMs ?? DEFAULT_TASK_TIMEOUT_MS;
  }

  async start(): Promise<void> {
    // Not asked again: nothing is built yet, and an engine that does not answer is said at once.
    const leftovers = await this.#call('list the indexes', () => this.#client.getRawIndexes({ limit: 1000 }));
    const live = this.#options.index;
    const prefixes = [live, ...Object.values(directoryUids(live))].map(buildIndexPrefix);
    const builds = leftovers.results.flatMap(({ uid }) => {
      const prefix = prefixes.find((p) => uid.startsWith(p));
      return prefix === undefined ? [] : [{ uid, started: versionStartedAt(uid.slice(prefix.length)) }];
    });
    const deleted: string[] = [];
    for (const { uid, started } of builds) {
      if (started === undefined || Date.now() - started <= ABANDONED_BUILD_MS) continue;
      try {
        await this.#run(`delete the abandoned build index ${uid}`, () => this.#client.deleteIndex(uid));
        deleted.push(uid);
      } catch {
        // Left for the warning below: a key without the right to delete it, say.
      }
    }
    if (deleted.length > 0) {
      this.#options.logger?.warn(
        { indexes: deleted },
        'deleted build indexes that interrupted runs left over a day ago',
      );
    }
    const stale = builds.map((b) => b.uid).filter((uid) => !deleted.includes(uid));
    if (stale.length > 0) {
      this.#options.logger?.warn(
        { indexes: stale },
        'Meilisearch holds build indexes of interrupted runs (or of a run in progress); delete them once no indexer runs, or the first run a day after they were started will',
      );
    }
    this.#liveAtStart = await this.#liveVersion();
    this.#created = true;
    await this.#run(`create index ${this.#buildUid}`, () =>
      this.#client.createIndex(this.#buildUid, { primaryKey: 'id' }),
    );
    const settings = {
      ...MEILI_SETTINGS,
      searchCutoffMs: this.#options.searchCutoffMs ?? MEILI_SETTINGS.searchCutoffMs,
    };
    await this.#run(`apply the settings of ${this.#buildUid}`, () => this.#build.updateSettings(settings));
  }

  async add(quotes: readonly Quote[]): Promise<void> {
    this.#assertOpen();
    if (this.#count + quotes.length > MAX_TOTAL_HITS) {
      throw new Error(`a Meilisearch catalogue holds at most ${MAX_TOTAL_HITS} quotes`);
    }
    for (const quote of quotes) {
      this.#directory.add(quote);
      await this.#push(JSON.stringify(this.#encode(quote)));
      this.#count++;
    }
  }

  /** Adds one NDJSON line to the batch of {@link #target}, sending the batch when it is full. */
  async #push(line: string): Promise<void> {
    const size = Buffer.byteLength(line);
    if (batchEndsBefore(this.#documents, this.#bytes, size, this.#maxBatchBytes)) await this.#flush();
    this.#append(line, size);
    if (batchIsFull(this.#documents, this.#batchSize)) await this.#flush();
  }

  #append(line: string, size: number): void {
    const needed = this.#bytes + 1 + size;
    if (this.#body === undefined || needed > this.#body.length) {
      // Only a document larger than a whole batch, alone in its batch, needs more than the buffer.
      this.#body = Buffer.allocUnsafeSlow(Math.max(this.#maxBatchBytes, needed));
    }
    if (this.#documents > 0) this.#body[this.#bytes++] = 0x0a;
    this.#bytes += this.#body.write(line, this.#bytes);
    this.#documents++;
  }

  async commit(): Promise<CatalogueInfo> {
    this.#assertOpen();
    this.#finished = true;
    await this.#drain();
    const stats = await this.#read(`read the stats of ${this.#buildUid}`, () => this.#build.getStats());
    if (stats.numberOfDocuments !== this.#count) {
      throw new Error(
        `Meilisearch index ${this.#buildUid} holds ${stats.numberOfDocuments} documents, expected ${this.#count}; the live index was not changed`,
      );
    }
    await this.#markFirstDocument();
    const live = this.#options.index;
    const firstRun = !(await this.#exists(live));
    const directory = await this.#buildDirectory();
    await this.#assertLiveUnchanged();
    const what = `swap ${this.#buildUid} into ${live}`;
    const swap = await this.#call(what, () =>
      this.#client.swapIndexes([
        firstRun
          ? { indexes: [this.#buildUid, live], rename: true }
          : { indexes: [live, this.#buildUid], rename: false },
        // The authors and works go live in the same swap as their quotes.
        ...directory.map(({ build, live: uid, firstRun: first }) =>
          first
            ? { indexes: [build, uid] as [string, string], rename: true }
            : { indexes: [uid, build] as [string, string], rename: false },
        ),
      ]),
    );
    // Asked once before waiting: the client's wait keeps its timeout timer running (and the
    // indexer's process alive) when the engine refuses to show the task.
    const visible = await this.#client.tasks.getTask(swap.taskUid).then(
      () => true,
      // Any other failure says nothing of the swap: the wait below settles it.
      (error: unknown) => !hiddenTask(error),
    );
    if (visible)
      await this.#wait(swap, what).catch((error: unknown) => this.#confirmSwap(swap.taskUid, error));
    else await this.#settleHiddenSwap(what);
    this.#swapped = true;
    for (const { build, firstRun: first } of directory) {
      if (first) continue;
      await this.#run(`delete the previous directory (now ${build})`, () =>
        this.#client.deleteIndex(build),
      ).catch((error: unknown) => {
        this.#options.logger?.warn(
          { index: build, err: String(error) },
          'the new catalogue is live but a previous directory index could not be deleted',
        );
      });
    }
    if (!firstRun) {
      // The new catalogue is live; a failure here only leaves the old one behind.
      await this.#run(`delete the previous catalogue (now ${this.#buildUid})`, () =>
        this.#client.deleteIndex(this.#buildUid),
      ).catch((error: unknown) => {
        this.#options.logger?.warn(
          { index: this.#buildUid, err: String(error) },
          'the new catalogue is live but the previous one could not be deleted',
        );
      });
    }
    this.#options.logger?.info(
      { index: live, version: this.#version, count: this.#count, firstRun },
      'Meilisearch catalogue swapped in',
    );
    return { version: this.#version, count: this.#count };
  }

  /** The version of the live catalogue; undefined when there is none (or it carries none). */
  async #liveVersion(): Promise<string | undefined> {
    const live = this.#options.index;
    try {
      const { hits } = await this.#retrying(`read the version of ${live}`, () =>
        this.#client.index<MeiliQuoteDocument>(live).search(null, {
          limit: 1,
          attributesToRetrieve: ['catalogue_version'],
        }),
      );
      const version = hits[0]?.catalogue_version;
      return typeof version === 'string' ? version : undefined;
    } catch (error) {
      if (error instanceof MeilisearchApiError && error.cause?.code === 'index_not_found') return undefined;
      throw this.#describe(error, `read the version of ${live}`);
    }
  }

  /**
   * Refuses the swap when another run replaced the live catalogue since this build started: both
   * swaps would succeed, and the one that ran last would silently undo the other, whichever file
   * was newer. The run that swaps first wins; this one is discarded, saying which run won.
   */
  async #assertLiveUnchanged(): Promise<void> {
    const now = await this.#liveVersion();
    if (now === this.#liveAtStart) return;
    const live = this.#options.index;
    throw new MeiliConcurrentRunError(
      `another indexer run replaced ${live} (version ${now ?? 'none'}) while this one was building on version ${this.#liveAtStart ?? 'none'}; this run's catalogue was discarded and ${live} kept as that run left it: run this one again to replace it`,
    );
  }

  /**
   * Writes the marks the service reads with the catalogue's version, on the document the engine
   * lists first: the sort chunks of long text values (meilisearch/request.ts, SortChunks), which
   * the order of such a catalogue depends on, so that a build that cannot write them fails; and
   * {@link ENGINE_ORDER_ID} when the engine holds the documents in ascending id order.
   */
  async #markFirstDocument(): Promise<void> {
    const chunks = this.#encode.sortChunks();
    const chunked = Object.keys(chunks).length > 0;
    const order = await this.#engineOrder();
    let first = order?.first;
    if (chunked && first === undefined) {
      const { results } = await this.#read(`read the first document of ${this.#buildUid}`, () =>
        this.#build.getDocuments<{ id: number }>({ fields: ['id'], offset: 0, limit: 1 }),
      );
      first = results[0]?.id;
    }
    if (first === undefined) return;
    const mark: Partial<MeiliQuoteDocument> & { id: number } = { id: first };
    if (order?.ordered === true) mark.catalogue_order = ENGINE_ORDER_ID;
    if (chunked) mark.catalogue_sort_chunks = chunks;
    if (Object.keys(mark).length === 1) return;
    const marking = this.#run(`mark the first document of ${this.#buildUid}`, () =>
      this.#build.updateDocuments([mark]),
    );
    if (chunked) {
      await marking;
      return;
    }
    await marking.catch((error: unknown) => {
      this.#options.logger?.warn(
        { index: this.#buildUid, err: String(error) },
        'the engine order of the new catalogue could not be marked: it is read with the full sort',
      );
    });
  }

  /**
   * The document the engine lists first, and whether it holds every document in ascending id
   * order, which the service's reads then rely on (meilisearch/request.ts, inEngineOrder). The
   * engine lists documents in an order of its own, which is the order they were sent in as far
   * as it has shown, but nothing promises that: every id is read back in that order. A file out
   * of id order, or a key that may not read documents (created by an earlier release: run the
   * keys step again), only leaves the catalogue unmarked, read with the full sort.
   */
  async #engineOrder(): Promise<{ first: number | undefined; ordered: boolean } | undefined> {
    try {
      let previous = 0;
      let first: number | undefined;
      let seen = 0;
      while (seen < this.#count) {
        const { results } = await this.#retrying('read the ids of the new catalogue', () =>
          this.#build.getDocuments<{ id: number }>({ fields: ['id'], offset: seen, limit: ORDER_CHECK_PAGE }),
        );
        if (results.length === 0) break;
        first ??= results[0]?.id;
        for (const { id } of results) {
          if (!(id > previous)) {
            this.#options.logger?.info(
              { index: this.#buildUid },
              'the quotes are not in id order: the catalogue is read with the full sort',
            );
            return { first, ordered: false };
          }
          previous = id;
        }
        seen += results.length;
      }
      return { first, ordered: first !== undefined && seen === this.#count };
    } catch (error) {
      this.#options.logger?.warn(
        { index: this.#buildUid, err: String(this.#describe(error, 'read the ids of the new catalogue')) },
        'the engine order of the new catalogue could not be checked: it is read with the full sort',
      );
      return undefined;
    }
  }

  /**
   * Settles a swap whose task this key may not read: a key limited to the catalogue's own
   * indexes does not see swap tasks. The engine runs tasks in the order they were enqueued, so
   * once a marker index created after the swap exists, the swap has run; the live index then
   * holds this build's documents, or the swap failed.
   */
  async #settleHiddenSwap(what: string): Promise<void> {
    const marker = `${this.#buildUid}_swapped`;
    // A marker that could not be made says nothing of the swap, which is enqueued and may well
    // have run: the live version still decides, only it can no longer prove a failure.
    let markerFailure: unknown;
    try {
      await this.#run(`create the marker index ${marker}`, () => this.#client.createIndex(marker));
    } catch (error) {
      if (error instanceof MeiliTaskError && error.ended) throw error;
      markerFailure = error;
    }
    if (markerFailure === undefined) {
      await this.#run(`delete the marker index ${marker}`, () => this.#client.deleteIndex(marker)).catch(
        (error: unknown) => {
          this.#options.logger?.warn(
            { index: marker, err: String(error) },
            'a marker index could not be deleted',
          );
        },
      );
    }
    const live = this.#options.index;
    // The swap has run: only this read says how. A read that failed for a moment would report a
    // failed swap while the new catalogue is live, so it is asked again before anything is said.
    let failure: unknown;
    try {
      const { hits } = await this.#read(`read the version of ${live}`, () =>
        this.#client.index<MeiliQuoteDocument>(live).search(null, {
          limit: 1,
          attributesToRetrieve: ['catalogue_version'],
        }),
      );
      if (hits[0]?.catalogue_version === this.#version) return;
      if (markerFailure === undefined) {
        throw new MeiliTaskError(
          `Meilisearch could not ${what}: the live index does not hold the new catalogue`,
          { ended: true },
        );
      }
    } catch (error) {
      if (error instanceof MeiliTaskError) throw error;
      failure = error;
    }
    if (markerFailure !== undefined) {
      // The swap may still run: the build then holds the previous catalogue, so it is kept.
      this.#swapPending = true;
      throw new MeiliTaskError(
        `${(markerFailure as Error).message}; whether the swap has run could not be told: the new catalogue is live once the documents of ${live} carry catalogue_version ${this.#version}, and ${this.#buildUid} then holds the previous one (delete it)`,
        { cause: markerFailure },
      );
    }
    throw new MeiliTaskError(
      `Meilisearch could not ${what}: the swap has run, but whether the live index holds the new catalogue could not be read (${(failure as Error).message}); it does if its documents' catalogue_version is ${this.#version}`,
      { ended: true, cause: failure },
    );
  }

  /**
   * Settles a swap whose wait failed. A failed wait (the engine unreachable for a moment, or
   * slower than the task timeout) says nothing of the swap itself, which may have gone through:
   * the task's own state decides, read once more. Only a task that did not succeed fails the
   * build, so the indexer never reports a failure while the new catalogue is live.
   */
  async #confirmSwap(taskUid: number, waitError: unknown): Promise<void> {
    if (waitError instanceof MeiliTaskError && waitError.ended) throw waitError;
    let status: string;
    try {
      status = (
        await this.#retrying(`read the swap's task ${taskUid}`, () => this.#client.tasks.getTask(taskUid))
      ).status;
    } catch {
      throw waitError;
    }
    if (status === 'succeeded') {
      this.#options.logger?.warn(
        { task: taskUid, err: String(waitError) },
        'waiting for the swap failed, but the swap succeeded',
      );
      return;
    }
    if (status === 'failed' || status === 'canceled') throw waitError;
    this.#swapPending = true;
    throw new MeiliTaskError(
      `${(waitError as Error).message}; the swap (task ${taskUid}) is still ${status}: the new catalogue goes live if it succeeds, and ${this.#buildUid} then holds the previous one (delete it)`,
      { cause: waitError },
    );
  }

  abort(): Promise<void> {
    this.#finished = true;
    this.#aborting ??= this.#discard();
    return this.#aborting;
  }

  async #discard(): Promise<void> {
    if (!this.#created || this.#swapped || this.#swapPending) return;
    for (const uid of Object.values(this.#directoryBuilds ?? {})) {
      await this.#run(`delete the unfinished index ${uid}`, () => this.#client.deleteIndex(uid)).catch(
        () => {},
      );
    }
    const pending = this.#inFlight.splice(0).map((t) => t.taskUid);
    if (pending.length > 0) {
      // Tasks run in order: cancelling spares the engine indexing documents about to be deleted,
      // and the deletion enqueued next waits for it. Not waited for itself: a cancel task belongs
      // to no index, so a key scoped to the catalogue's indexes cannot read it.
      await this.#call('cancel the pending document tasks', () =>
        this.#client.tasks.cancelTasks({ uids: pending }),
      ).catch(() => {});
    }
    try {
      await this.#run(`delete the unfinished index ${this.#buildUid}`, () =>
        this.#client.deleteIndex(this.#buildUid),
      );
    } catch (error) {
      if (error instanceof MeiliTaskError && /index_not_found/.test(error.message)) return;
      throw error;
    }
  }

  async #flush(): Promise<void> {
    if (this.#documents === 0 || this.#body === undefined) return;
    const index = this.#target;
    const what = `send ${this.#documents} documents to ${index}`;
    const task = await this.#postDocuments(index, this.#body.subarray(0, this.#bytes), what);
    this.#documents = 0;
    this.#bytes = 0;
    if (this.#body.length > this.#maxBatchBytes) this.#body = undefined;
    this.#inFlight.push({ taskUid: task.taskUid, index });
    while (this.#inFlight.length > MAX_TASKS_IN_FLIGHT) await this.#awaitOldest();
  }

  /**
   * Posts NDJSON bytes as they are. The client's `addDocumentsFromString` takes a string only, and
   * `fetch` copies a buffer body: `node:http` sends the batch's own buffer, which is reused once
   * the engine answered (it reads the whole payload before it enqueues the task).
   */
  async #postDocuments(index: string, body: Buffer, what: string): Promise<{ taskUid: number }> {
    const host = this.#options.host;
    const base = host.endsWith('/') ? host : `${host}/`;
    const url = new URL(`indexes/${encodeURIComponent(index)}/documents?primaryKey=id`, base);
    const timeoutMs = this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const headers: Record<string, string | number> = {
      'Content-Type': 'application/x-ndjson',
      'Content-Length': body.length,
    };
    if (this.#options.apiKey !== undefined) headers.Authorization = `Bearer ${this.#options.apiKey}`;
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let answer: { status: number; text: string };
    try {
      answer = await new Promise((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', headers, signal: AbortSignal.timeout(timeoutMs) },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', reject);
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    } catch (error) {
      const reason =
        error instanceof Error && error.name === 'AbortError'
          ? `no answer within ${timeoutMs} ms`
          : networkReason(error);
      throw unreachable(what, host, reason, error);
    }
    let parsed: { taskUid?: unknown; message?: unknown; code?: unknown } = {};
    try {
      parsed = JSON.parse(answer.text) as typeof parsed;
    } catch {
      // An answer that is not JSON (a proxy's error page) is reported by its status below.
    }
    if (answer.status >= 200 && answer.status < 300 && typeof parsed.taskUid === 'number') {
      return { taskUid: parsed.taskUid };
    }
    const message = typeof parsed.message === 'string' ? parsed.message : answer.text.slice(0, 200);
    const code = typeof parsed.code === 'string' ? parsed.code : `HTTP ${answer.status}`;
    throw refused(what, message, code);
  }

  /** Sends the batch being gathered and waits until every document task sent has succeeded. */
  async #drain(): Promise<void> {
    await this.#flush();
    while (this.#inFlight.length > 0) await this.#awaitOldest();
  }

  async #awaitOldest(): Promise<void> {
    const task = this.#inFlight[0];
    if (task === undefined) return;
    // Stays listed until it finished, so that an abort meanwhile cancels it too.
    await this.#wait(task, `index documents into ${task.index}`);
    this.#inFlight.shift();
  }

  async #exists(uid: string): Promise<boolean> {
    try {
      await this.#retrying(`look up index ${uid}`, () => this.#client.getRawIndex(uid));
      return true;
    } catch (error) {
      if (error instanceof MeilisearchApiError && error.cause?.code === 'index_not_found') return false;
      throw this.#describe(error, `look up index ${uid}`);
    }
  }

  /** Enqueues a task, waits for it and checks that it succeeded. */
  async #run(what: string, enqueue: () => Promise<EnqueuedTask>): Promise<Task> {
    const task = await this.#call(what, enqueue);
    return this.#wait(task, what);
  }

  async #wait(enqueued: { taskUid: number }, what: string): Promise<Task> {
    const task = await this.#call(what, () => this.#poll(enqueued.taskUid, what));
    if (task.status !== 'succeeded') {
      const reason = task.error === null ? 'no reason given' : `${task.error.message} (${task.error.code})`;
      throw new MeiliTaskError(`Meilisearch could not ${what}: task ${task.uid} ${task.status}: ${reason}`, {
        ended: true,
      });
    }
    return task;
  }

  /**
   * The task once it has ended, asked every {@link TASK_POLL_MS}. Not the client's `waitForTask`:
   * its deadline timer outlives a poll that fails (a task the key cannot read, an engine gone),
   * and held the process for the whole task timeout after an indexer had said it was done.
   */
  async #poll(taskUid: number, what: string): Promise<Task> {
    const deadline = performance.now() + this.#taskTimeoutMs;
    for (;;) {
      const task = await this.#retrying(what, () => this.#client.tasks.getTask(taskUid));
      if (task.status !== 'enqueued' && task.status !== 'processing') return task;
      if (performance.now() >= deadline) throw new MeilisearchTaskTimeOutError(taskUid, this.#taskTimeoutMs);
      await delay(Math.min(TASK_POLL_MS, Math.max(0, deadline - performance.now())));
    }
  }

  /** {@link #call} for a read, which {@link #retrying} asks again when it failed for a moment. */
  #read<T>(what: string, read: () => Promise<T>): Promise<T> {
    return this.#call(what, () => this.#retrying(what, read));
  }

  /**
   * Runs a read again, up to {@link READ_ATTEMPTS} times, while it fails in a way that may pass
   * (see {@link passing}); its last failure is the caller's. Only reads: a write whose answer was
   * lost may have gone through, and a second could undo it (a swap) or fail on it (an index created).
   */
  async #retrying<T>(what: string, read: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (error) {
        if (attempt >= READ_ATTEMPTS || !passing(error)) throw error;
        this.#options.logger?.info(
          { attempt, err: String(this.#describe(error, what)) },
          'a Meilisearch read failed; asking again',
        );
        await delay(READ_RETRY_PAUSE_MS * 2 ** (attempt - 1));
      }
    }
  }

  async #call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw this.#describe(error, what);
    }
  }

  /** An error whose message says what failed and why, in the engine's words when it gave any. */
  #describe(error: unknown, what: string): Error {
    const host = this.#options.host;
    if (error instanceof MeilisearchTaskTimeOutError) {
      return new MeiliTaskError(
        `Meilisearch did not ${what} within ${this.#taskTimeoutMs} ms (task ${error.cause.taskUid})`,
        { cause: error },
      );
    }
    if (error instanceof MeilisearchRequestError) {
      const reason =
        error.cause instanceof MeilisearchRequestTimeOutError
          ? `no answer within ${error.cause.cause.timeout} ms`
          : networkReason(error.cause);
      return unreachable(what, host, reason, error);
    }
    if (error instanceof MeilisearchApiError) {
      return refused(what, error.message, error.cause?.code ?? `HTTP ${error.response.status}`, error);
    }
    if (notJson(error)) return unreachable(what, host, 'an answer that is not JSON', error);
    return error instanceof Error ? error : new Error(String(error));
  }

  /**
   * Builds the authors and works indexes of the new catalogue beside it (settings, then documents,
   * then a count check), for the swap that makes all three live at once. Each pair says whether
   * its live index exists yet (an index built before authors and works had none).
   */
  async #buildDirectory(): Promise<{ build: string; live: string; firstRun: boolean }[]> {
    const lives = directoryUids(this.#options.index);
    const builds = {
      authors: buildIndexUid(lives.authors, this.#version),
      works: buildIndexUid(lives.works, this.#version),
    };
    this.#directoryBuilds = builds;
    const out: { build: string; live: string; firstRun: boolean }[] = [];
    for (const kind of ['authors', 'works'] as const) {
      const uid = builds[kind];
      await this.#run(`create index ${uid}`, () => this.#client.createIndex(uid, { primaryKey: 'id' }));
      const index = this.#client.index(uid);
      await this.#run(`apply the settings of ${uid}`, () =>
        index.updateSettings(kind === 'authors' ? AUTHORS_SETTINGS : WORKS_SETTINGS),
      );
      // Sent as the quotes are, through the batch buffer: the documents are made one at a time.
      const documents =
        kind === 'authors'
          ? this.#directory.authorDocuments(this.#version)
          : this.#directory.workDocuments(this.#version);
      const expected = kind === 'authors' ? this.#directory.authorCount : this.#directory.workCount;
      this.#target = uid;
      for (const document of documents) await this.#push(JSON.stringify(document));
      await this.#drain();
      const stats = await this.#read(`read the stats of ${uid}`, () => index.getStats());
      if (stats.numberOfDocuments !== expected) {
        throw new Error(
          `Meilisearch index ${uid} holds ${stats.numberOfDocuments} documents, expected ${expected}; the live index was not changed`,
        );
      }
      out.push({ build: uid, live: lives[kind], firstRun: !(await this.#exists(lives[kind])) });
    }
    return out;
  }

  #assertOpen(): void {
    if (this.#finished) throw new Error('this Meilisearch build is already committed or aborted');
  }
}

/**
 * A failure that may pass: no answer (a reset or refused connection, an engine restarting, a
 * request timeout), a 5xx (a proxy's 502 or 503, an engine briefly unable to answer), or an
 * answer that is not JSON (see {@link notJson}). An answer such as a refused key or a missing
 * index is the same when asked again.
 */
function passing(error: unknown): boolean {
  if (error instanceof MeilisearchRequestError || notJson(error)) return true;
  return error instanceof MeilisearchApiError && error.response.status >= 500;
}

/**
 * The client parses every answer as JSON before it looks at the status, so a proxy's HTML error
 * page (a 502) reaches the builder as the parser's error, with neither status nor request.
 */
function notJson(error: unknown): boolean {
  return error instanceof SyntaxError;
}

/** The engine refused to show a task: the key is limited to some indexes and the task spans several. */
function hiddenTask(error: unknown): boolean {
  return error instanceof MeilisearchApiError && error.cause?.code === 'task_not_found';
}

/** The engine could not be reached for `what`: the network's reason, or the timeout. */
function unreachable(what: string, host: string, reason: string, cause: unknown): CatalogueUnavailableError {
  return new CatalogueUnavailableError(
    `could not ${what}: Meilisearch at ${host} is unreachable (${reason})`,
    {
      cause,
    },
  );
}

/** The engine answered `what` with an error: its own message and code. */
function refused(what: string, message: string, code: string, cause?: unknown): Error {
  const text = `Meilisearch refused to ${what}: ${message} (${code})`;
  return cause === undefined ? new Error(text) : new Error(text, { cause });
}
