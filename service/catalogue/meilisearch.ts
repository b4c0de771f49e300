/**
 * The Meilisearch adapter of the catalogue port, read side. Every call is one or two reads of
 * the live index through the documents routes (`POST /documents/fetch`, `GET /documents/{id}`),
 * the engine's cheapest exact answer to a listing without full-text search; the requests
 * themselves are built by `meilisearch-request.ts`. The service's key holds `search` and
 * `documents.get` on the live index, nothing that writes.
 *
 * Availability: the client's per-request timeout bounds every call (and aborts its request),
 * and engine failures become {@link CatalogueUnavailableError} (HTTP 503): unreachable, timed
 * out, answering 5xx or non-JSON, refusing the key, or holding no index yet. Any other refusal
 * is a request this adapter built wrongly, a bug, and is rethrown as is (HTTP 500). After a
 * failure, {@link CatalogueIndex.recentFailure} names it (so `/ready` answers 503 at once) until
 * a read succeeds.
 *
 * Live reload comes for free: the indexer swaps a finished index into the live name, and the
 * next read sees it. A call made of two reads checks that both saw the same number of matches,
 * and reads again otherwise, so it never mixes two catalogues.
 */
import { randomInt } from 'node:crypto';
import {
  type Index,
  Meilisearch,
  MeilisearchApiError,
  MeilisearchRequestError,
  MeilisearchRequestTimeOutError,
} from 'meilisearch';
import {
  buildFilter,
  countRequest,
  type FetchRequest,
  type FetchResponse,
  filterExpression,
  getRequest,
  infoRequest,
  type MeiliQuoteDocument,
  pageRequest,
  pickRequest,
  projectHit,
  SAMPLE_SCAN,
  SHALLOW_OFFSET,
  sampleByIdsRequest,
  sampleRunRequests,
  sampleScanRequest,
} from './meilisearch-request.ts';
import {
  type CatalogueIndex,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  type Filters,
  type ListQuery,
  type ListResult,
  type QuoteField,
  type QuoteProjection,
} from './port.ts';
import { drawDistinct } from './sample.ts';

/** How long {@link CatalogueIndex.info} answers from memory: it is read on every request (ETags). */
export const INFO_TTL_MS = 1_000;
/** Reads of a two-read call (`list`, `random`) before giving up while the catalogue keeps changing. */
const ATTEMPTS = 3;
/** Reads of one `randomSample` call in flight at once, when it reads offset by offset. */
const SAMPLE_READS_AT_ONCE = 4;
/** Seconds a client is told to wait when the engine or the service sheds load. */
export const ENGINE_BUSY_RETRY_AFTER_S = 1;
/**
 * Deep pages (read after a count) one service instance has the engine read at once. Each can
 * keep an engine core busy for a few hundred milliseconds on a large catalogue; past this many,
 * more would only queue in the engine until every one of them timed out. A deep page beyond them
 * waits in the service for a read to end, for at most half of what is left of its call's time
 * (so that it can still be read once admitted), and is answered 503 with Retry-After when none
 * ends by then. `MEILI_DEEP_READS` sets it (about twice the engine's cores).
 */
export const MAX_DEEP_READS = 4;

export interface MeiliCatalogueOptions {
  /** Engine address, e.g. `http://127.0.0.1:7700`. */
  host: string;
  /** A key allowed to search the index (a search-only key in production). */
  apiKey: string | undefined;
  /** Live index uid. */
  index: string;
  /** Upper bound of one engine request; past it the call fails with CatalogueUnavailableError. */
  timeoutMs: number;
  /** Pages starting before this offset are read forward without a count first ({@link SHALLOW_OFFSET}). */
  shallowOffset?: number;
  /** Matches up to this many are sampled from one read of their ids (default SAMPLE_SCAN). */
  sampleScan?: number;
  /** Deep pages read at once, default {@link MAX_DEEP_READS}; more wait for a slot, then answer 503. */
  maxDeepReads?: number;
  logger?: CatalogueLogger;
}

/**
 * Opens the live Meilisearch index for reading. Never touches the network itself: an engine
 * that is down (or not yet up) surfaces as {@link CatalogueUnavailableError} from each call,
 * and the same object serves as soon as the engine answers.
 */
export function openMeiliCatalogue(options: MeiliCatalogueOptions): CatalogueIndex {
  return new MeiliCatalogue(options);
}

class MeiliCatalogue implements CatalogueIndex {
  readonly kind = 'meilisearch';
  readonly #options: MeiliCatalogueOptions;
  readonly #http: Index['httpRequest'];
  readonly #fetchPath: string;
  #info: { value: CatalogueInfo; at: number } | undefined;
  #pendingInfo: Promise<CatalogueInfo> | undefined;
  #deepReads = 0;
  /** Deep pages waiting for a read to end, oldest first; each is handed the slot a read frees. */
  readonly #deepWaiting: Array<(admitted: boolean) => void> = [];
  /** The last engine failure, until a read succeeds again. */
  #failure: CatalogueUnavailableError | undefined;

  constructor(options: MeiliCatalogueOptions) {
    this.#options = options;
    const client = new Meilisearch({
      host: options.host,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
      // Uncompressed answers: the engine sits next to the service, and compressing each answer
      // there and inflating it here cost more CPU than the service's own work on a listing.
      requestInit: { headers: { 'Accept-Encoding': 'identity' } },
    });
    this.#http = client.index(options.index).httpRequest;
    this.#fetchPath = `indexes/${encodeURIComponent(options.index)}/documents/fetch`;
  }

  recentFailure(): CatalogueUnavailableError | undefined {
    return this.#failure;
  }

  info(): Promise<CatalogueInfo> {
    const cached = this.#info;
    // After a failure the answer in memory says nothing of the engine now: read it afresh.
    if (cached !== undefined && this.#failure === undefined && performance.now() - cached.at < INFO_TTL_MS) {
      return Promise.resolve(cached.value);
    }
    return this.#refreshInfo();
  }

  #refreshInfo(): Promise<CatalogueInfo> {
    // Concurrent callers share one request; a failure is not cached, so the next call retries.
    this.#pendingInfo ??= this.#loadInfo().finally(() => {
      this.#pendingInfo = undefined;
    });
    return this.#pendingInfo;
  }

  async #loadInfo(): Promise<CatalogueInfo> {
    const response = await this.#fetch(infoRequest(), this.#deadline());
    const hit = response.results[0];
    let version: string;
    if (hit === undefined) {
      // The indexer never builds an empty catalogue; an empty index answers the same to every
      // request whatever its origin, so one version for all of them is exact.
      version = 'empty';
    } else if (typeof hit.catalogue_version === 'string' && hit.catalogue_version !== '') {
      version = hit.catalogue_version;
    } else {
      throw new CatalogueUnavailableError(
        `Meilisearch index '${this.#options.index}' was not built by the indexer (its documents have no catalogue version)`,
      );
    }
    const info = { version, count: response.total };
    if (this.#info?.value.version !== version) {
      this.#options.logger?.info({ backend: this.kind, ...info }, 'serving catalogue');
    }
    this.#info = { value: info, at: performance.now() };
    return info;
  }

  async list(query: ListQuery): Promise<ListResult> {
    const deadline = this.#deadline();
    const toItems = (results: readonly object[]) => results.map((hit) => projectHit(hit, query.fields));
    if ((query.page - 1) * query.limit < (this.#options.shallowOffset ?? SHALLOW_OFFSET)) {
      const plan = pageRequest(query);
      if ('pastEnd' in plan) throw new Error('a page read forward cannot be past the end');
      const response = await this.#fetch(plan.request, deadline);
      return { items: toItems(response.results), total: response.total };
    }
    let total = (await this.#fetch(countRequest(filterExpression(buildFilter(query.filters))), deadline))
      .total;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const plan = pageRequest(query, total);
      if ('pastEnd' in plan) return { items: [], total };
      if (!(await this.#admitDeep(deadline))) {
        throw new CatalogueUnavailableError('too many deep pages are being read at once', {
          retryAfterSeconds: ENGINE_BUSY_RETRY_AFTER_S,
        });
      }
      let response: FetchResponse<MeiliQuoteDocument>;
      try {
        response = await this.#fetch(plan.request, deadline);
      } finally {
        this.#releaseDeep();
      }
      if (response.total === total) {
        const items = toItems(response.results);
        return { items: plan.reversed ? items.reverse() : items, total };
      }
      // The catalogue was replaced between the count and the page: plan again on the new one.
      total = response.total;
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while a page was read');
  }

  async get(id: number, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const { path, params } = getRequest(this.#options.index, id, fields);
    let document: object;
    try {
      const signal = this.#signal(this.#deadline());
      document = await this.#call(() =>
        this.#http.get<object>({ path, params, extraRequestInit: { signal } }),
      );
    } catch (error) {
      if (error instanceof MeilisearchApiError && error.cause?.code === 'document_not_found') {
        this.#failure = undefined;
        return null;
      }
      throw error;
    }
    return projectHit(document, fields);
  }

  async random(filters: Filters, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const deadline = this.#deadline();
    const filter = filterExpression(buildFilter(filters));
    let total = (await this.#fetch(countRequest(filter), deadline)).total;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (total === 0) return null;
      const response = await this.#fetch(pickRequest(filter, randomInt(total), fields), deadline);
      const hit = response.results[0];
      if (hit !== undefined && response.total === total) return projectHit(hit, fields);
      // The catalogue was replaced between the count and the pick: draw again in the new one.
      total = response.total;
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while a random quote was drawn');
  }

  /**
   * Draws distinct offsets in the exact total, then reads the quotes there: when every match's id
   * came with the total (at most SAMPLE_SCAN matches), one more read by id; otherwise one read
   * per run of nearby offsets, all at once. Every read names the build that answered it, and a
   * draw that saw two builds (a catalogue swapped in meanwhile) is drawn again.
   */
  async randomSample(
    filters: Filters,
    fields: readonly QuoteField[] | null,
    count: number,
  ): Promise<QuoteProjection[]> {
    const deadline = this.#deadline();
    const filter = filterExpression(buildFilter(filters));
    // The ids of every match come with the count when the whole catalogue is small; otherwise
    // the count comes first, alone, and the ids only if the matches turn out few.
    const scanLimit = this.#options.sampleScan ?? SAMPLE_SCAN;
    const known = this.#info?.value.count;
    const scanFirst = known !== undefined && known <= scanLimit;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let scan = await this.#fetch(
        scanFirst ? sampleScanRequest(filter, scanLimit) : countRequest(filter),
        deadline,
      );
      const total = scan.total;
      if (total === 0) return [];
      let sameTotal = true;
      if (total <= scanLimit && scan.results.length !== total) {
        scan = await this.#fetch(sampleScanRequest(filter, scanLimit), deadline);
        sameTotal = scan.total === total;
      }
      const offsets = drawDistinct(total, count, randomInt);
      const versions = new Set(scan.results.map((hit) => hit.catalogue_version));
      let byOffset: Map<number, MeiliQuoteDocument>;
      if (total <= scanLimit && scan.results.length === total) {
        const ids = offsets.map((offset) => (scan.results[offset] as MeiliQuoteDocument).id);
        const read = await this.#fetch(sampleByIdsRequest(ids, fields), deadline);
        const byId = new Map(read.results.map((hit) => [hit.id, hit]));
        for (const hit of read.results) versions.add(hit.catalogue_version);
        byOffset = new Map();
        for (const [i, offset] of offsets.entries()) {
          const hit = byId.get(ids[i] as number);
          if (hit !== undefined) byOffset.set(offset, hit);
        }
      } else {
        const runs = sampleRunRequests(filter, offsets, fields);
        const answers = await this.#fetchSome(
          runs.map((run) => run.request),
          deadline,
        );
        byOffset = new Map();
        for (const [i, answer] of answers.entries()) {
          if (answer.total !== total) sameTotal = false;
          for (const [j, hit] of answer.results.entries()) {
            byOffset.set((runs[i] as { offset: number }).offset + j, hit);
            versions.add(hit.catalogue_version);
          }
        }
      }
      if (sameTotal && versions.size === 1 && offsets.every((offset) => byOffset.has(offset))) {
        return offsets.map((offset) => projectHit(byOffset.get(offset) as object, fields));
      }
      // The catalogue was replaced between the reads: draw again in the new one.
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while random quotes were drawn');
  }

  /**
   * Sends requests at most {@link SAMPLE_READS_AT_ONCE} at a time, answers in request order: one
   * call never floods the engine with all of its reads at once.
   */
  async #fetchSome(
    requests: readonly FetchRequest[],
    deadline: number,
  ): Promise<FetchResponse<MeiliQuoteDocument>[]> {
    const answers = new Array<FetchResponse<MeiliQuoteDocument>>(requests.length);
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const at = next++;
        answers[at] = await this.#fetch(requests[at] as FetchRequest, deadline);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SAMPLE_READS_AT_ONCE, requests.length) }, worker));
    return answers;
  }

  async close(): Promise<void> {
    // The client keeps no connection of its own (fetch's shared pool does); only drop the cache.
    this.#info = undefined;
  }

  /** When a port call made now must have its answer: one call is one `MEILI_TIMEOUT_MS`, whatever its reads. */
  /** Takes a deep-read slot, waiting for one until half the call's remaining time; false if none came. */
  #admitDeep(deadline: number): Promise<boolean> {
    if (this.#deepReads < (this.#options.maxDeepReads ?? MAX_DEEP_READS)) {
      this.#deepReads++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const admit = (admitted: boolean) => {
        clearTimeout(timer);
        resolve(admitted);
      };
      const timer = setTimeout(
        () => {
          const at = this.#deepWaiting.indexOf(admit);
          if (at >= 0) this.#deepWaiting.splice(at, 1);
          resolve(false);
        },
        Math.max(0, (deadline - performance.now()) / 2),
      );
      this.#deepWaiting.push(admit);
    });
  }

  /** Ends a deep read: its slot goes to the oldest waiting page, else back to the pool. */
  #releaseDeep(): void {
    const next = this.#deepWaiting.shift();
    if (next === undefined) this.#deepReads--;
    else next(true);
  }

  #deadline(): number {
    return performance.now() + this.#options.timeoutMs;
  }

  /** Aborts a request at the call's deadline (the client's own timeout bounds one request only). */
  #signal(deadline: number): AbortSignal {
    return AbortSignal.timeout(Math.max(1, Math.ceil(deadline - performance.now())));
  }

  #fetch(request: FetchRequest, deadline: number): Promise<FetchResponse<MeiliQuoteDocument>> {
    const signal = this.#signal(deadline);
    return this.#call(() =>
      this.#http.post<FetchResponse<MeiliQuoteDocument>>({
        path: this.#fetchPath,
        body: request,
        extraRequestInit: { signal },
      }),
    );
  }

  /** One engine request; a failure the engine's state explains is remembered for `info`. */
  async #call<T>(request: () => Promise<T>): Promise<T> {
    try {
      const answer = await request();
      this.#failure = undefined;
      return answer;
    } catch (error) {
      const portError = toPortError(error, this.#options);
      if (portError instanceof CatalogueUnavailableError) {
        this.#failure = portError;
      }
      throw portError;
    }
  }
}

/**
 * The port's reading of a client error: {@link CatalogueUnavailableError} for anything the
 * engine's state explains (the call may succeed later), the error itself for a bad request.
 */
export function toPortError(
  error: unknown,
  where: { host: string; index: string; timeoutMs: number },
): unknown {
  if (error instanceof MeilisearchRequestError) {
    if (
      error.cause instanceof MeilisearchRequestTimeOutError ||
      (error.cause instanceof Error && error.cause.name === 'TimeoutError')
    ) {
      return new CatalogueUnavailableError(
        `Meilisearch at ${where.host} did not answer within ${where.timeoutMs} ms`,
        { cause: error },
      );
    }
    return new CatalogueUnavailableError(
      `Meilisearch at ${where.host} is unreachable (${networkReason(error.cause)})`,
      { cause: error },
    );
  }
  if (error instanceof MeilisearchApiError) {
    const status = error.response.status;
    const code = error.cause?.code;
    if (code === 'too_many_search_requests') {
      return new CatalogueUnavailableError('Meilisearch is busy (too_many_search_requests)', {
        cause: error,
        retryAfterSeconds: ENGINE_BUSY_RETRY_AFTER_S,
      });
    }
    if (code === 'index_not_found') {
      return new CatalogueUnavailableError(
        `Meilisearch holds no index '${where.index}' yet: run the indexer`,
        { cause: error },
      );
    }
    if (status === 401 || status === 403) {
      return new CatalogueUnavailableError(
        `Meilisearch refused the API key (${code ?? status}): check MEILI_API_KEY`,
        { cause: error },
      );
    }
    if (status >= 500 || code === undefined) {
      return new CatalogueUnavailableError(`Meilisearch answered HTTP ${status}`, { cause: error });
    }
    return error;
  }
  // The client parses every body as JSON: a proxy's error page in front of the engine lands here.
  if (error instanceof SyntaxError) {
    return new CatalogueUnavailableError('Meilisearch answered with a body that is not JSON', {
      cause: error,
    });
  }
  return error;
}

/** The system error code behind a failed fetch (ECONNREFUSED, ENOTFOUND...), or its message. */
export function networkReason(cause: unknown): string {
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    if (current.cause === undefined) return current.message;
    current = current.cause;
  }
  return 'network error';
}
