/**
 * Tests of the Meilisearch builder and of the deployment's keys.
 *
 * 1. Protocol: the order of its calls and its failure paths, against a small in-memory engine
 *    that speaks the task protocol (enqueue, poll, succeed or fail) and can be told to fail, lose
 *    documents or stall: what a real engine cannot be made to do on demand.
 * 2. On a real engine (found by `test-support/meilisearch-engine.ts`, else skipped): the first
 *    build renamed into place, a later one swapped in, an aborted one leaving the live catalogue
 *    as it was, the settings as written, and the key flow of `deploy/meili-keys.ts` (the
 *    indexer's key builds and swaps; the service's key reads the live index and nothing else).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureKeys, keySpecs } from '../../../deploy/meili-keys.ts';
import { type DelayingProxy, delayingProxy } from '../../test-support/delaying-proxy.ts';
import { FIXTURE_QUOTES } from '../../test-support/fixtures.ts';
import { readerThroughProxy } from '../../test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from '../../test-support/meilisearch-engine.ts';
import { compareQuotes, project } from '../../test-support/reference.ts';
import {
  type CatalogueLogger,
  CatalogueUnavailableError,
  type ListQuery,
  normaliseFilters,
  type Quote,
  type SortKey,
} from '../port.ts';
import { ABANDONED_BUILD_MS, createMeiliBuilder, MeiliTaskError } from './builder.ts';
import { openMeiliCatalogue } from './catalogue.ts';
import { createDocumentEncoder, MEILI_SETTINGS } from './request.ts';

interface FakeIndex {
  primaryKey: string | null;
  documents: Map<number, Record<string, unknown>>;
  settings: unknown;
}
interface FakeTask {
  uid: number;
  indexUid: string | null;
  type: string;
  status: 'enqueued' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  error: { message: string; code: string; type: string; link: string } | null;
  run: () => void;
  /** Never finishes (until canceled), blocking the tasks after it like a real queue. */
  stalled: boolean;
}
interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: string;
}

/** Faults to inject, chosen per test. */
interface Faults {
  /** The task of the matching call ends `failed` with this engine error. */
  failTask?: { when: (call: Call) => boolean; code: string; message: string };
  /** The task of the matching call never leaves `processing`. */
  stallTask?: (call: Call) => boolean;
  /** The stats of an index under-report this many documents. */
  loseDocuments?: number;
  /** Answer every request with this API error. */
  refuse?: { status: number; code: string; message: string };
  /** The matching calls are refused as a key without the action would be (403). */
  forbid?: (call: Call) => boolean;
  /** Answer this many polls of the matching task's state with a 503 (the engine busy for a moment). */
  failPolls?: { when: (task: FakeTask) => boolean; count: number };
}

/** An engine keeping indexes and tasks in memory, reachable over HTTP like the real one. */
async function fakeEngine() {
  const indexes = new Map<string, FakeIndex>();
  const tasks: FakeTask[] = [];
  const calls: Call[] = [];
  const faults: Faults = {};
  const apiError = (code: string, message: string) => ({ message, code, type: 'invalid_request', link: '' });

  const enqueue = (call: Call, indexUid: string | null, type: string, run: () => void) => {
    const task: FakeTask = {
      uid: tasks.length,
      indexUid,
      type,
      status: 'enqueued',
      error: null,
      run,
      stalled: false,
    };
    tasks.push(task);
    if (faults.failTask?.when(call)) {
      const { code, message } = faults.failTask;
      task.run = () => {
        throw apiError(code, message);
      };
    }
    if (faults.stallTask?.(call)) task.stalled = true;
    return { taskUid: task.uid, indexUid, status: 'enqueued', type, enqueuedAt: new Date().toISOString() };
  };

  const runTask = (task: FakeTask) => {
    try {
      task.run();
      task.status = 'succeeded';
    } catch (error) {
      task.status = 'failed';
      task.error = error as FakeTask['error'];
    }
  };

  /** On each poll: cancelations first (as the engine prioritises them), then the queue in order. */
  const process = () => {
    for (const task of tasks) {
      if (task.type === 'taskCancelation' && task.status === 'enqueued') runTask(task);
    }
    for (const task of tasks) {
      if (task.status !== 'enqueued' && task.status !== 'processing') continue;
      if (task.stalled) {
        task.status = 'processing';
        return;
      }
      runTask(task);
    }
  };
  const mustExist = (uid: string) => {
    const index = indexes.get(uid);
    if (index === undefined) throw apiError('index_not_found', `Index \`${uid}\` not found.`);
    return index;
  };

  const route = (call: Call): [number, unknown] => {
    const { method, path } = call;
    const parts = path.split('/').filter(Boolean);
    if (method === 'GET' && path === '/indexes') {
      const results = [...indexes.keys()].map((uid) => ({
        uid,
        primaryKey: 'id',
        createdAt: '',
        updatedAt: '',
      }));
      return [200, { results, offset: 0, limit: 1000, total: results.length }];
    }
    if (method === 'POST' && path === '/indexes') {
      const { uid, primaryKey } = JSON.parse(call.body) as { uid: string; primaryKey: string };
      return [
        202,
        enqueue(call, uid, 'indexCreation', () => {
          if (indexes.has(uid)) throw apiError('index_already_exists', `Index \`${uid}\` already exists.`);
          indexes.set(uid, { primaryKey, documents: new Map(), settings: null });
        }),
      ];
    }
    if (parts[0] === 'indexes' && parts.length === 2 && method === 'GET') {
      const uid = parts[1] as string;
      if (!indexes.has(uid)) return [404, apiError('index_not_found', `Index \`${uid}\` not found.`)];
      return [200, { uid, primaryKey: 'id', createdAt: '', updatedAt: '' }];
    }
    if (parts[0] === 'indexes' && parts.length === 2 && method === 'DELETE') {
      const uid = parts[1] as string;
      return [
        202,
        enqueue(call, uid, 'indexDeletion', () => {
          mustExist(uid);
          indexes.delete(uid);
        }),
      ];
    }
    if (parts[0] === 'indexes' && parts[2] === 'settings' && method === 'PATCH') {
      const uid = parts[1] as string;
      return [
        202,
        enqueue(call, uid, 'settingsUpdate', () => {
          mustExist(uid).settings = JSON.parse(call.body);
        }),
      ];
    }
    if (parts[0] === 'indexes' && parts[2] === 'documents' && method === 'POST') {
      const uid = parts[1] as string;
      return [
        202,
        enqueue(call, uid, 'documentAdditionOrUpdate', () => {
          const index = mustExist(uid);
          for (const line of call.body.split('\n')) {
            const doc = JSON.parse(line) as Record<string, unknown>;
            index.documents.set(doc.id as number, doc);
          }
        }),
      ];
    }
    // The engine's own order of documents is the order they were first sent in, as in this Map.
    if (parts[0] === 'indexes' && parts[2] === 'documents' && parts.length === 3 && method === 'GET') {
      const index = indexes.get(parts[1] as string);
      if (index === undefined) return [404, apiError('index_not_found', 'not found')];
      const offset = Number(call.query.get('offset') ?? 0);
      const limit = Number(call.query.get('limit') ?? 20);
      const fields = call.query.get('fields')?.split(',');
      const all = [...index.documents.values()];
      const results = all
        .slice(offset, offset + limit)
        .map((doc) => (fields === undefined ? doc : Object.fromEntries(fields.map((f) => [f, doc[f]]))));
      return [200, { results, offset, limit, total: all.length }];
    }
    // Only what the builder searches for: the catalogue version of the index's first document.
    if (parts[0] === 'indexes' && parts[2] === 'search' && method === 'POST') {
      const index = indexes.get(parts[1] as string);
      if (index === undefined) return [404, apiError('index_not_found', 'not found')];
      const first = index.documents.values().next().value;
      const hits = first === undefined ? [] : [{ catalogue_version: first.catalogue_version }];
      return [
        200,
        {
          hits,
          query: '',
          processingTimeMs: 0,
          limit: 1,
          offset: 0,
          estimatedTotalHits: index.documents.size,
        },
      ];
    }
    if (parts[0] === 'indexes' && parts[2] === 'documents' && method === 'PUT') {
      const uid = parts[1] as string;
      return [
        202,
        enqueue(call, uid, 'documentAdditionOrUpdate', () => {
          const index = mustExist(uid);
          for (const update of JSON.parse(call.body) as Record<string, unknown>[]) {
            const id = update.id as number;
            index.documents.set(id, { ...index.documents.get(id), ...update });
          }
        }),
      ];
    }
    if (parts[0] === 'indexes' && parts[2] === 'stats' && method === 'GET') {
      const index = indexes.get(parts[1] as string);
      if (index === undefined) return [404, apiError('index_not_found', 'not found')];
      const numberOfDocuments = index.documents.size - (faults.loseDocuments ?? 0);
      return [200, { numberOfDocuments, isIndexing: false, fieldDistribution: {} }];
    }
    if (method === 'POST' && path === '/swap-indexes') {
      // Every pair in one task, all or nothing, as the engine swaps them.
      const swaps = JSON.parse(call.body) as { indexes: [string, string]; rename: boolean }[];
      return [
        202,
        enqueue(call, null, 'indexSwap', () => {
          for (const {
            indexes: [a, b],
            rename,
          } of swaps) {
            mustExist(a);
            if (rename && indexes.has(b))
              throw apiError('index_already_exists', `Index \`${b}\` already exists.`);
            if (!rename) mustExist(b);
          }
          for (const {
            indexes: [a, b],
            rename,
          } of swaps) {
            const first = mustExist(a);
            if (rename) {
              indexes.delete(a);
              indexes.set(b, first);
            } else {
              const second = mustExist(b);
              indexes.set(a, second);
              indexes.set(b, first);
            }
          }
        }),
      ];
    }
    if (method === 'POST' && path === '/tasks/cancel') {
      const uids = (call.query.get('uids') ?? '').split(',').map(Number);
      return [
        202,
        enqueue(call, null, 'taskCancelation', () => {
          for (const task of tasks) {
            if (uids.includes(task.uid) && (task.status === 'enqueued' || task.status === 'processing')) {
              task.status = 'canceled';
            }
          }
        }),
      ];
    }
    if (method === 'GET' && parts[0] === 'tasks' && parts.length === 2) {
      process();
      const task = tasks[Number(parts[1])];
      if (task === undefined) return [404, apiError('task_not_found', 'Task not found.')];
      const failPolls = faults.failPolls;
      if (failPolls !== undefined && failPolls.count > 0 && failPolls.when(task)) {
        failPolls.count--;
        return [503, apiError('internal', 'The engine is busy.')];
      }
      const { run: _run, ...view } = task;
      return [
        200,
        { ...view, batchUid: null, canceledBy: null, duration: null, startedAt: null, finishedAt: null },
      ];
    }
    return [404, apiError('not_found', `no route ${method} ${path}`)];
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://engine');
      const call: Call = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
      };
      calls.push(call);
      let status: number;
      let body: unknown;
      if (faults.refuse !== undefined) {
        status = faults.refuse.status;
        body = apiError(faults.refuse.code, faults.refuse.message);
      } else if (faults.forbid?.(call)) {
        status = 403;
        body = apiError('invalid_api_key', 'The provided API key is invalid.');
      } else {
        try {
          [status, body] = route(call);
        } catch (error) {
          [status, body] = [404, error];
        }
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    host: `http://127.0.0.1:${port}`,
    indexes,
    tasks,
    calls,
    faults,
    /** Calls as `METHOD /path`, build index names replaced by `<build>`. */
    trace: () => calls.map((c) => `${c.method} ${c.path.replace(/quotes_build_[a-z0-9-]+/, '<build>')}`),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

type Engine = Awaited<ReturnType<typeof fakeEngine>>;

function recordingLogger(): CatalogueLogger & { lines: { level: string; obj: object; msg?: string }[] } {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  return {
    lines,
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
}

/** Builds a catalogue the way the indexer does: add in chunks, commit, abort on failure. */
async function index(
  engine: Engine,
  quotes: Quote[],
  options: {
    batchSize?: number;
    maxBatchBytes?: number;
    taskTimeoutMs?: number;
    logger?: CatalogueLogger;
  } = {},
) {
  const builder = await createMeiliBuilder({
    host: engine.host,
    apiKey: 'admin-key',
    index: 'quotes',
    ...options,
  });
  try {
    for (let i = 0; i < quotes.length; i += 3) await builder.add(quotes.slice(i, i + 3));
    return await builder.commit();
  } catch (error) {
    await builder.abort();
    throw error;
  }
}

const idsOf = (engine: Engine, uid: string) =>
  [...(engine.indexes.get(uid)?.documents.keys() ?? [])].sort((a, b) => a - b);
const TEN = FIXTURE_QUOTES.slice(0, 10);
/** The live quotes index and the authors and works indexes swapped in with it. */
const LIVE_INDEXES = ['quotes', 'quotes_authors', 'quotes_works'];
const OTHER = FIXTURE_QUOTES.slice(10, 14);

describe('the Meilisearch build protocol', () => {
  let engine: Engine;
  afterEach(async () => {
    await engine?.close();
  });

  it('on the first run: settings before documents, batches, every task checked, then a rename', async () => {
    engine = await fakeEngine();
    const info = await index(engine, TEN, { batchSize: 4 });
    expect(info.count).toBe(10);
    expect(info.version).toMatch(/^[0-9a-z]+-[0-9a-f]{8}$/);
    expect([...engine.indexes.keys()].sort()).toEqual(LIVE_INDEXES);
    expect(idsOf(engine, 'quotes')).toEqual(TEN.map((q) => q.id).sort((a, b) => a - b));
    const live = engine.indexes.get('quotes') as FakeIndex;
    expect(live.settings).toEqual(MEILI_SETTINGS);
    expect([...live.documents.values()].every((d) => d.catalogue_version === info.version)).toBe(true);

    const trace = engine.trace().filter((t) => !t.startsWith('GET /tasks/'));
    expect(trace).toEqual([
      'GET /indexes',
      // The live catalogue's version as the build starts, and again just before the swap: a
      // catalogue another run swapped in meanwhile is not replaced.
      'POST /indexes/quotes/search',
      'POST /indexes',
      'PATCH /indexes/<build>/settings',
      'POST /indexes/<build>/documents',
      'POST /indexes/<build>/documents',
      'POST /indexes/<build>/documents',
      'GET /indexes/<build>/stats',
      // Its ids read back in the engine's order: not in id order, so the build is not marked.
      'GET /indexes/<build>/documents',
      'GET /indexes/quotes',
      // The authors and works of the build, each in an index of its own, swapped in with it.
      'POST /indexes',
      `PATCH /indexes/quotes_authors_build_${info.version}/settings`,
      `POST /indexes/quotes_authors_build_${info.version}/documents`,
      `GET /indexes/quotes_authors_build_${info.version}/stats`,
      'GET /indexes/quotes_authors',
      'POST /indexes',
      `PATCH /indexes/quotes_works_build_${info.version}/settings`,
      `POST /indexes/quotes_works_build_${info.version}/documents`,
      `POST /indexes/quotes_works_build_${info.version}/documents`,
      `GET /indexes/quotes_works_build_${info.version}/stats`,
      'GET /indexes/quotes_works',
      'POST /indexes/quotes/search',
      'POST /swap-indexes',
    ]);
    const create = engine.calls.find((c) => c.method === 'POST' && c.path === '/indexes') as Call;
    const build = (JSON.parse(create.body) as { uid: string }).uid;
    expect(JSON.parse(create.body)).toEqual({ uid: build, primaryKey: 'id' });
    expect(build).toBe(`quotes_build_${info.version}`);
    const batches = engine.calls.filter(
      (c) => c.method === 'POST' && c.path === `/indexes/${build}/documents`,
    );
    expect(batches.map((c) => [c.contentType, c.query.get('primaryKey'), c.body.split('\n').length])).toEqual(
      [
        ['application/x-ndjson', 'id', 4],
        ['application/x-ndjson', 'id', 4],
        ['application/x-ndjson', 'id', 2],
      ],
    );
    const swap = engine.calls.find((c) => c.path === '/swap-indexes') as Call;
    expect(JSON.parse(swap.body)).toEqual([
      { indexes: [build, 'quotes'], rename: true },
      { indexes: [`quotes_authors_build_${info.version}`, 'quotes_authors'], rename: true },
      { indexes: [`quotes_works_build_${info.version}`, 'quotes_works'], rename: true },
    ]);
    // Every enqueued task was polled until it finished.
    const polled = new Set(engine.calls.filter((c) => c.path.startsWith('/tasks/')).map((c) => c.path));
    // Create, settings and three batches of the quotes; create, settings and batches of the
    // authors (one) and the works (two); then the swap.
    expect(polled).toEqual(new Set(Array.from({ length: 13 }, (_, i) => `/tasks/${i}`)));
  });

  it('marks the first document of a build whose ids the engine lists in ascending order, after reading them all', async () => {
    engine = await fakeEngine();
    const inOrder = [...FIXTURE_QUOTES].sort((a, b) => a.id - b.id);
    const info = await index(engine, inOrder, { batchSize: 16 });
    const trace = engine.trace().filter((t) => !t.startsWith('GET /tasks/'));
    const stats = trace.indexOf('GET /indexes/<build>/stats');
    expect(trace.slice(stats, stats + 3)).toEqual([
      'GET /indexes/<build>/stats',
      'GET /indexes/<build>/documents',
      'PUT /indexes/<build>/documents',
    ]);
    const reads = engine.calls.filter((c) => c.method === 'GET' && c.path.endsWith('/documents'));
    expect(reads.map((c) => [c.query.get('fields'), c.query.get('offset')])).toEqual([['id', '0']]);
    const mark = engine.calls.find((c) => c.method === 'PUT') as Call;
    expect(JSON.parse(mark.body)).toEqual([{ id: inOrder[0]?.id, catalogue_order: 'id' }]);
    const live = [...(engine.indexes.get('quotes') as FakeIndex).documents.values()];
    expect(live[0]).toMatchObject({
      id: inOrder[0]?.id,
      catalogue_version: info.version,
      catalogue_order: 'id',
    });
    expect(live.filter((d) => 'catalogue_order' in d)).toHaveLength(1);
  });

  it('records on the first document how many sort chunks long values take, beside the order mark', async () => {
    engine = await fakeEngine();
    const inOrder = [...TEN].sort((a, b) => a.id - b.id);
    const long = inOrder.map((q, i) =>
      i === 3 ? { ...q, author: `${'Ø'.repeat(300)} a`, work: 'w'.repeat(900) } : q,
    );
    await index(engine, long);
    const mark = engine.calls.find((c) => c.method === 'PUT') as Call;
    expect(JSON.parse(mark.body)).toEqual([
      { id: inOrder[0]?.id, catalogue_order: 'id', catalogue_sort_chunks: { author: 2, work: 3 } },
    ]);
    const live = [...(engine.indexes.get('quotes') as FakeIndex).documents.values()];
    expect(live.filter((d) => 'catalogue_sort_chunks' in d)).toHaveLength(1);
  });

  it('records the sort chunks on the first document listed when the ids are out of order', async () => {
    engine = await fakeEngine();
    const outOfOrder = [...TEN].sort((a, b) => b.id - a.id);
    const long = outOfOrder.map((q, i) => (i === 5 ? { ...q, category: 'c'.repeat(470) } : q));
    await index(engine, long);
    const mark = engine.calls.find((c) => c.method === 'PUT') as Call;
    expect(JSON.parse(mark.body)).toEqual([
      { id: outOfOrder[0]?.id, catalogue_sort_chunks: { category: 2 } },
    ]);
  });

  it('fails a build with long values when it cannot record their sort chunks, the live index untouched', async () => {
    engine = await fakeEngine();
    await index(engine, OTHER);
    engine.faults.forbid = (call) => call.method === 'GET' && call.path.endsWith('/documents');
    const long = TEN.map((q, i) => (i === 0 ? { ...q, genre: ['g'.repeat(600)] } : q));
    await expect(index(engine, long, { logger: recordingLogger() })).rejects.toThrow(/first document/);
    const live = [...(engine.indexes.get('quotes') as FakeIndex).documents.values()];
    expect(live.map((d) => d.id).sort()).toEqual(OTHER.map((q) => q.id).sort());
  });

  it('goes on unmarked when the engine will not list the ids (a key of an earlier release)', async () => {
    engine = await fakeEngine();
    engine.faults.forbid = (call) => call.method === 'GET' && call.path.endsWith('/documents');
    const logger = recordingLogger();
    const inOrder = [...TEN].sort((a, b) => a.id - b.id);
    await index(engine, inOrder, { logger });
    expect(engine.trace()).not.toContain('PUT /indexes/<build>/documents');
    expect([...engine.indexes.keys()].sort()).toEqual(LIVE_INDEXES);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'the engine order of the new catalogue could not be checked: it is read with the full sort',
    ]);
  });

  it('cuts batches by bytes too, sends a document larger than a batch alone, and keeps every byte', async () => {
    engine = await fakeEngine();
    // A long quote in the middle (its text with CJK and accents, several bytes per character).
    const long = { ...(TEN[4] as Quote), quote: `${'Était-ce 夢 ? '.repeat(400)}fin` };
    const quotes = [...TEN.slice(0, 4), long, ...TEN.slice(5)];
    const encode = createDocumentEncoder('x');
    const sizes = quotes.map((q) => Buffer.byteLength(JSON.stringify(encode(q))));
    const limit = Math.max(...sizes.filter((_, i) => i !== 4)) * 2 + 1;
    expect(sizes[4]).toBeGreaterThan(limit);
    await index(engine, quotes, { maxBatchBytes: limit });
    const batches = engine.calls.filter(
      (c) => c.method === 'POST' && /^\/indexes\/quotes_build_[^/]+\/documents$/.test(c.path),
    );
    const bodies = batches.map((c) => c.body);
    // Every batch but the long quote's own fits the limit, and none could have taken the next line.
    bodies.forEach((body, i) => {
      if (!body.includes('夢')) expect(Buffer.byteLength(body)).toBeLessThanOrEqual(limit);
      const next = bodies[i + 1]?.split('\n')[0];
      if (next !== undefined)
        expect(Buffer.byteLength(body) + 1 + Buffer.byteLength(next)).toBeGreaterThan(limit);
    });
    expect(bodies.filter((b) => b.includes('夢'))).toHaveLength(1);
    expect(bodies.find((b) => b.includes('夢'))?.split('\n')).toHaveLength(1);
    const sent = bodies.flatMap((b) =>
      b.split('\n').map((line) => JSON.parse(line) as { id: number; quote: string }),
    );
    expect(sent.map((d) => d.id)).toEqual(quotes.map((q) => q.id));
    expect(sent.map((d) => d.quote)).toEqual(quotes.map((q) => q.quote));
  });

  it('on later runs: swaps with the live index, then deletes the previous catalogue', async () => {
    engine = await fakeEngine();
    await index(engine, OTHER);
    const before = engine.calls.length;
    const info = await index(engine, TEN);
    expect([...engine.indexes.keys()].sort()).toEqual(LIVE_INDEXES);
    expect(idsOf(engine, 'quotes')).toEqual(TEN.map((q) => q.id).sort((a, b) => a - b));
    const calls = engine.calls.slice(before);
    const swap = calls.find((c) => c.path === '/swap-indexes') as Call;
    expect(JSON.parse(swap.body)).toEqual([
      { indexes: ['quotes', `quotes_build_${info.version}`], rename: false },
      { indexes: ['quotes_authors', `quotes_authors_build_${info.version}`], rename: false },
      { indexes: ['quotes_works', `quotes_works_build_${info.version}`], rename: false },
    ]);
    const deletes = calls.filter((c) => c.method === 'DELETE').map((c) => c.path);
    expect(deletes).toEqual([
      `/indexes/quotes_authors_build_${info.version}`,
      `/indexes/quotes_works_build_${info.version}`,
      `/indexes/quotes_build_${info.version}`,
    ]);
  });

  it('aborts on a failed document task with the engine message, leaving the live index untouched', async () => {
    engine = await fakeEngine();
    await index(engine, OTHER);
    const before = engine.calls.length;
    engine.faults.failTask = {
      when: (call) =>
        call.path.startsWith('/indexes/quotes_build_') &&
        call.path.endsWith('/documents') &&
        call.body.includes('"id":7,'),
      code: 'invalid_document_fields',
      message: 'The document `7` holds a field Meilisearch cannot index.',
    };
    const error = await index(engine, TEN, { batchSize: 4 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MeiliTaskError);
    expect((error as Error).message).toMatch(
      /^Meilisearch could not index documents into quotes_build_\S+: task \d+ failed: The document `7` holds a field Meilisearch cannot index\. \(invalid_document_fields\)$/,
    );
    const calls = engine.calls.slice(before);
    expect(calls.some((c) => c.path === '/swap-indexes')).toBe(false);
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.path)).toEqual([
      expect.stringMatching(/^\/indexes\/quotes_build_/),
    ]);
    expect([...engine.indexes.keys()].sort()).toEqual(LIVE_INDEXES);
    expect(idsOf(engine, 'quotes')).toEqual(OTHER.map((q) => q.id).sort((a, b) => a - b));
  });

  it('aborts when the engine holds fewer documents than were sent', async () => {
    engine = await fakeEngine();
    engine.faults.loseDocuments = 1;
    const error = await index(engine, TEN).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /^Meilisearch index quotes_build_\S+ holds 9 documents, expected 10; the live index was not changed$/,
    );
    expect(engine.calls.some((c) => c.path === '/swap-indexes')).toBe(false);
    expect([...engine.indexes.keys()]).toEqual([]);
  });

  it('gives up on a task that never finishes, cancels what is pending and discards the build', async () => {
    engine = await fakeEngine();
    engine.faults.stallTask = (call) => call.path.endsWith('/documents');
    const started = performance.now();
    const error = await index(engine, TEN, { batchSize: 4, taskTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(error).toBeInstanceOf(MeiliTaskError);
    expect((error as Error).message).toMatch(
      /^Meilisearch did not index documents into quotes_build_\S+ within 300 ms \(task \d+\)$/,
    );
    expect(engine.calls.some((c) => c.path === '/swap-indexes')).toBe(false);
    // Every document task was still unfinished, the awaited one included: all are canceled.
    const documentTasks = engine.tasks.filter((t) => t.type === 'documentAdditionOrUpdate');
    expect(documentTasks).toHaveLength(3);
    const cancel = engine.calls.find((c) => c.path === '/tasks/cancel');
    expect(cancel?.query.get('uids')).toBe(documentTasks.map((t) => t.uid).join(','));
    expect(documentTasks.map((t) => t.status)).toEqual(['canceled', 'canceled', 'canceled']);
    expect([...engine.indexes.keys()]).toEqual([]);
  });

  it('aborts when the swap fails (a live index appeared meanwhile), with the engine message', async () => {
    engine = await fakeEngine();
    engine.faults.failTask = {
      when: (call) => call.path === '/swap-indexes',
      code: 'index_already_exists',
      message: 'Index `quotes` already exists.',
    };
    const error = await index(engine, TEN).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /^Meilisearch could not swap quotes_build_\S+ into quotes: task \d+ failed: Index `quotes` already exists\. \(index_already_exists\)$/,
    );
    expect([...engine.indexes.keys()]).toEqual([]);
  });

  it('reports success when waiting for the swap failed but the swap went through', async () => {
    engine = await fakeEngine();
    await index(engine, TEN);
    // The look before waiting, then every attempt of the wait's poll: a single failed poll is
    // only asked again.
    engine.faults.failPolls = { when: (task) => task.type === 'indexSwap', count: 5 };
    const logger = recordingLogger();
    const builder = await createMeiliBuilder({ host: engine.host, apiKey: 'k', index: 'quotes', logger });
    await builder.add(OTHER);
    const info = await builder.commit();
    expect(idsOf(engine, 'quotes')).toEqual(OTHER.map((q) => q.id).sort((a, b) => a - b));
    expect(info.count).toBe(OTHER.length);
    // The previous catalogue, swapped out, is deleted as after any swap.
    expect([...engine.indexes.keys()].sort()).toEqual(LIVE_INDEXES);
    expect(logger.lines.some((l) => l.msg === 'waiting for the swap failed, but the swap succeeded')).toBe(
      true,
    );
  });

  it('says the swap is still pending when its wait gives up before the engine ran it', async () => {
    engine = await fakeEngine();
    await index(engine, TEN);
    engine.faults.stallTask = (call) => call.path === '/swap-indexes';
    const error = await index(engine, TEN.slice(0, 2), { taskTimeoutMs: 300 }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /^Meilisearch did not swap (quotes_build_\S+) into quotes within 300 ms \(task (\d+)\); the swap \(task \2\) is still processing: the new catalogue goes live if it succeeds, and \1 then holds the previous one \(delete it\)$/,
    );
    // Nothing changed meanwhile, and nothing was deleted: both catalogues are still there.
    expect(idsOf(engine, 'quotes')).toEqual(TEN.map((q) => q.id).sort((a, b) => a - b));
    // Three live indexes (quotes, authors, works) and the three builds of the pending swap.
    expect(engine.indexes.size).toBe(6);
    expect(engine.calls.filter((c) => c.method === 'DELETE')).toEqual([]);
  });

  it('fails fast, with nothing created, when the engine refuses the key', async () => {
    engine = await fakeEngine();
    engine.faults.refuse = {
      status: 403,
      code: 'invalid_api_key',
      message: 'The provided API key is invalid.',
    };
    const error = await createMeiliBuilder({ host: engine.host, apiKey: 'wrong', index: 'quotes' }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe(
      'Meilisearch refused to list the indexes: The provided API key is invalid. (invalid_api_key)',
    );
    expect(engine.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /indexes']);
  });

  it('fails fast with CatalogueUnavailableError when the engine is unreachable', async () => {
    engine = await fakeEngine();
    const probe = createNetServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((done) => probe.close(() => done()));
    const started = performance.now();
    const error = await createMeiliBuilder({
      host: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      index: 'quotes',
    }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(error).toBeInstanceOf(CatalogueUnavailableError);
    expect((error as Error).message).toBe(
      `could not list the indexes: Meilisearch at http://127.0.0.1:${port} is unreachable (ECONNREFUSED)`,
    );
  });

  it('warns about build indexes left by interrupted runs', async () => {
    engine = await fakeEngine();
    const left = { primaryKey: 'id', documents: new Map(), settings: null };
    engine.indexes.set('quotes_build_old-1', left);
    engine.indexes.set('quotes_other', left);
    const logger = recordingLogger();
    const builder = await createMeiliBuilder({ host: engine.host, apiKey: 'k', index: 'quotes', logger });
    await builder.abort();
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.obj)).toEqual([
      { indexes: ['quotes_build_old-1'] },
    ]);
    expect([...engine.indexes.keys()].sort()).toEqual(['quotes_build_old-1', 'quotes_other']);
  });

  it('refuses use after commit, and aborts idempotently', async () => {
    engine = await fakeEngine();
    const builder = await createMeiliBuilder({ host: engine.host, apiKey: 'k', index: 'quotes' });
    await builder.add(TEN);
    await builder.commit();
    await expect(builder.add(OTHER)).rejects.toThrow(/already committed or aborted/);
    await expect(builder.commit()).rejects.toThrow(/already committed or aborted/);
    await builder.abort();
    await builder.abort();
    expect(idsOf(engine, 'quotes')).toHaveLength(10);
    const discarded = await createMeiliBuilder({ host: engine.host, apiKey: 'k', index: 'quotes' });
    await discarded.add(OTHER);
    await Promise.all([discarded.abort(), discarded.abort()]);
    expect([...engine.indexes.keys()].sort()).toEqual(LIVE_INDEXES);
    expect(idsOf(engine, 'quotes')).toHaveLength(10);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. On a real engine

const SUITE = 'builder and keys';
const source = await meiliEngineSource(inject('containerRuntime'));
const skip = 'skip' in source ? announceSkip(SUITE, source.skip) : undefined;

describe.skipIf(skip !== undefined)(
  `the build and the keys on a real engine${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let real: MeiliEngine;
    let admin: Meilisearch;
    beforeAll(async () => {
      if ('skip' in source) return;
      real = await source.start(SUITE);
      admin = new Meilisearch({ host: real.host, apiKey: real.masterKey, timeout: 10_000 });
    });
    afterAll(async () => {
      await real?.stop();
    });

    const idsIn = async (uid: string) =>
      (await admin.index(uid).getDocuments<{ id: number }>({ fields: ['id'], limit: 1_000 })).results
        .map((d) => d.id)
        .sort((a, b) => a - b);
    const build = async (key: string, live: string, quotes: readonly Quote[], searchCutoffMs?: number) => {
      const builder = await createMeiliBuilder({
        host: real.host,
        apiKey: key,
        index: live,
        batchSize: 3,
        searchCutoffMs,
      });
      try {
        await builder.add(quotes);
        return await builder.commit();
      } catch (error) {
        await builder.abort();
        throw error;
      }
    };

    it('deletes with the indexer key the build indexes interrupted runs left over a day ago, and only those', async () => {
      const keys = await ensureKeys(admin, 'left_a');
      const version = (ms: number) => `${ms.toString(36)}-0badc0de`;
      const old = version(Date.now() - ABANDONED_BUILD_MS - 60_000);
      const recent = version(Date.now() - 60_000);
      const planted = [
        `left_a_build_${old}`,
        `left_a_authors_build_${old}`,
        `left_a_works_build_${old}`,
        // The marker of a swap the key could not see, left by a run stopped while settling it.
        `left_a_build_${old}_swapped`,
        `left_a_build_${recent}`,
        `left_a_build_${recent}_swapped`,
        'left_a_build_by-hand',
      ];
      for (const uid of planted) await admin.createIndex(uid).waitTask();
      const logger = recordingLogger();
      const builder = await createMeiliBuilder({
        host: real.host,
        apiKey: keys.get('indexer.key') as string,
        index: 'left_a',
        logger,
      });
      await builder.abort();
      const left = (await admin.getRawIndexes({ limit: 1000 })).results
        .map((i) => i.uid)
        .filter((uid) => uid.startsWith('left_a'));
      const kept = [`left_a_build_${recent}`, `left_a_build_${recent}_swapped`, 'left_a_build_by-hand'];
      expect(left.sort()).toEqual(kept.sort());
      const warned = logger.lines
        .filter((l) => l.level === 'warn')
        .map((l) => [...(l.obj as { indexes: string[] }).indexes].sort());
      expect(warned).toEqual([planted.slice(0, 4).sort(), kept.sort()]);
    });

    it('creates both keys once, finds them again, and re-creates one whose scope changed', async () => {
      const first = await ensureKeys(admin, 'keys_a');
      expect([...first.keys()]).toEqual(['indexer.key', 'search.key']);
      expect(await ensureKeys(admin, 'keys_a')).toEqual(first);
      const service = (await admin.getKeys({ limit: 1000 })).results.find((k) => k.name === 'keys_a-search');
      expect(service?.actions.sort()).toEqual(['documents.get', 'search']);
      expect(service?.indexes).toEqual(['keys_a', 'keys_a_authors', 'keys_a_works']);
      // A key of an earlier release (search only) is replaced by one with the current scope.
      await admin.deleteKey(service?.uid as string);
      await admin.createKey({
        name: 'keys_a-search',
        actions: ['search'],
        indexes: ['keys_a'],
        expiresAt: null,
      });
      const again = await ensureKeys(admin, 'keys_a');
      expect(again.get('indexer.key')).toBe(first.get('indexer.key'));
      const replaced = (await admin.getKeys({ limit: 1000 })).results.filter(
        (k) => k.name === 'keys_a-search',
      );
      expect(replaced.map((k) => k.actions.sort())).toEqual([['documents.get', 'search']]);
      expect(replaced[0]?.key).toBe(again.get('search.key'));
    });

    it('keeps the indexer key to its own catalogue: it can neither create nor delete another index', async () => {
      // Other applications' indexes, some named with the catalogue's name as a prefix.
      const others = ['other_app', 'scoped_a_staging', 'scoped_abc', 'scoped_a_authors_v2'];
      for (const uid of others) await admin.createIndex(uid).waitTask();
      const keys = await ensureKeys(admin, 'scoped_a');
      const indexer = new Meilisearch({ host: real.host, apiKey: keys.get('indexer.key'), timeout: 10_000 });
      for (const uid of others) {
        await expect(indexer.deleteIndex(uid), uid).rejects.toThrow(MeilisearchApiError);
        await expect(indexer.index(uid).getStats(), uid).rejects.toThrow(MeilisearchApiError);
        await expect(indexer.createIndex(`${uid}_2`), uid).rejects.toThrow(MeilisearchApiError);
      }
      const uids = (await admin.getRawIndexes({ limit: 1000 })).results.map((i) => i.uid);
      expect(uids).toEqual(expect.arrayContaining(others));
      for (const uid of others) expect(uids).not.toContain(`${uid}_2`);
      // Its own catalogue, built and swapped in with the same key, goes live.
      const info = await build(keys.get('indexer.key') as string, 'scoped_a', TEN);
      expect(await idsIn('scoped_a')).toEqual(TEN.map((q) => q.id).sort((a, b) => a - b));
      expect(
        (await admin.index('scoped_a').getDocuments<{ catalogue_version: string }>({ limit: 1 })).results[0]
          ?.catalogue_version,
      ).toBe(info.version);
    });

    it('reports the swap it could not see as done when the engine failed only after running it', async () => {
      const keys = await ensureKeys(admin, 'marker_a');
      const indexer = keys.get('indexer.key') as string;
      await build(indexer, 'marker_a', TEN);
      const proxy = await delayingProxy(real.host);
      // The engine fails every index creation once the swap is enqueued: the marker's too.
      proxy.refuse.when = (method, path) =>
        method === 'POST' && path === '/indexes' && proxy.requests.some((r) => r.path === '/swap-indexes');
      try {
        const builder = await createMeiliBuilder({ host: proxy.url, apiKey: indexer, index: 'marker_a' });
        await builder.add(OTHER);
        const info = await builder.commit().catch(async (error: unknown) => {
          await builder.abort();
          throw error;
        });
        expect(proxy.refuse.count).toBe(1);
        expect(await idsIn('marker_a')).toEqual(OTHER.map((q) => q.id).sort((a, b) => a - b));
        const live = await admin.index('marker_a').getDocuments<{ catalogue_version: string }>({ limit: 1 });
        expect(live.results[0]?.catalogue_version).toBe(info.version);
      } finally {
        await proxy.close();
      }
    });

    it('reads the live index again when its read after a swap the key cannot see fails for a moment', async () => {
      const keys = await ensureKeys(admin, 'hidden_a');
      const indexer = keys.get('indexer.key') as string;
      await build(indexer, 'hidden_a', TEN);
      const proxy = await delayingProxy(real.host);
      // The first read of the live index's version, which tells whether the swap went through.
      // The reads before it (as the build starts, and just before the swap) are left alone.
      const search = (method: string, path: string) =>
        method === 'POST' && path === '/indexes/hidden_a/search';
      proxy.refuse.when = (method, path) =>
        proxy.refuse.count === 0 &&
        search(method, path) &&
        proxy.requests.filter((r) => search(r.method, r.path)).length === 3;
      try {
        const builder = await createMeiliBuilder({ host: proxy.url, apiKey: indexer, index: 'hidden_a' });
        await builder.add(OTHER);
        const info = await builder.commit();
        expect(proxy.refuse.count).toBe(1);
        expect(await idsIn('hidden_a')).toEqual(OTHER.map((q) => q.id).sort((a, b) => a - b));
        const live = await admin.index('hidden_a').getDocuments<{ catalogue_version: string }>({ limit: 1 });
        expect(live.results[0]?.catalogue_version).toBe(info.version);
      } finally {
        await proxy.close();
      }
    });

    describe('an engine that fails a read for a moment', () => {
      const sortedIds = (quotes: readonly Quote[]) => quotes.map((q) => q.id).sort((a, b) => a - b);
      const liveVersion = async (uid: string) =>
        (await admin.index(uid).getDocuments<{ catalogue_version: string }>({ limit: 1 })).results[0]
          ?.catalogue_version;
      const buildIndexesOf = async (live: string) =>
        (await admin.getRawIndexes({ limit: 1000 })).results
          .map((i) => i.uid)
          .filter((uid) => uid.startsWith(`${live}_`) && uid.includes('_build_'));
      const taskPoll = (method: string, path: string) => method === 'GET' && /^\/tasks\/\d+$/.test(path);
      /** The proxy has passed on a batch of documents: the build is under way. */
      const documentsSent = (proxy: DelayingProxy) =>
        proxy.requests.some((r) => r.method === 'POST' && /\/documents(\?|$)/.test(r.path));
      /** A builder of `index` through `proxy`, handed the other catalogue in batches of three. */
      const rebuildThrough = async (
        proxy: DelayingProxy,
        index: string,
        logger?: ReturnType<typeof recordingLogger>,
      ) => {
        const builder = await createMeiliBuilder({
          host: proxy.url,
          apiKey: real.masterKey,
          index,
          batchSize: 3,
          ...(logger === undefined ? {} : { logger }),
        });
        await builder.add(OTHER);
        return builder;
      };
      /** The build committed, or aborted before its failure is thrown. */
      const committed = (builder: Awaited<ReturnType<typeof rebuildThrough>>) =>
        builder.commit().catch(async (error: unknown) => {
          await builder.abort();
          throw error;
        });

      it('goes on through a task poll answered 503 and a stats read whose connection is reset', async () => {
        await build(real.masterKey, 'blip_a', TEN);
        const proxy = await delayingProxy(real.host);
        proxy.refuse.when = (method, path) =>
          proxy.refuse.count === 0 && taskPoll(method, path) && documentsSent(proxy);
        let resets = 0;
        proxy.tamper.with = (request, _answer, res) => {
          if (resets > 0 || !/^\/indexes\/blip_a_build_[^/]+\/stats$/.test(request.path)) return false;
          resets++;
          res.destroy();
          return true;
        };
        const logger = recordingLogger();
        try {
          const info = await committed(await rebuildThrough(proxy, 'blip_a', logger));
          expect([proxy.refuse.count, resets]).toEqual([1, 1]);
          expect(await idsIn('blip_a')).toEqual(sortedIds(OTHER));
          expect(await liveVersion('blip_a')).toBe(info.version);
          expect(await buildIndexesOf('blip_a')).toEqual([]);
          const retries = logger.lines.filter((l) => l.msg === 'a Meilisearch read failed; asking again');
          expect(retries.map((l) => l.level)).toEqual(['info', 'info']);
        } finally {
          await proxy.close();
        }
      });

      it("goes on through a proxy's 502 error page in place of a task poll's answer", async () => {
        await build(real.masterKey, 'blip_d', TEN);
        const proxy = await delayingProxy(real.host);
        let pages = 0;
        proxy.tamper.with = (request, _answer, res) => {
          if (pages > 0 || !taskPoll(request.method, request.path) || !documentsSent(proxy)) return false;
          pages++;
          res.writeHead(502, { 'content-type': 'text/html' });
          res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
          return true;
        };
        try {
          const info = await committed(await rebuildThrough(proxy, 'blip_d'));
          expect(pages).toBe(1);
          expect(await idsIn('blip_d')).toEqual(sortedIds(OTHER));
          expect(await liveVersion('blip_d')).toBe(info.version);
        } finally {
          await proxy.close();
        }
      });

      it('fails the build, the live catalogue unchanged, when a task poll keeps failing past the retries', async () => {
        const before = await build(real.masterKey, 'blip_b', TEN);
        const proxy = await delayingProxy(real.host);
        let failing = true;
        proxy.refuse.when = (method, path) => failing && taskPoll(method, path) && documentsSent(proxy);
        try {
          const builder = await rebuildThrough(proxy, 'blip_b');
          const started = performance.now();
          const error = await builder.commit().catch((e: unknown) => e);
          const elapsed = performance.now() - started;
          failing = false;
          await builder.abort();
          expect((error as Error).message).toMatch(
            /^Meilisearch refused to index documents into blip_b_build_\S+: unavailable for a moment \(internal\)$/,
          );
          // Every attempt at the one poll, over a few seconds, and nothing after the last.
          expect(proxy.refuse.count).toBe(4);
          expect(elapsed).toBeGreaterThan(2_000);
          expect(elapsed).toBeLessThan(10_000);
          expect(await idsIn('blip_b')).toEqual(sortedIds(TEN));
          expect(await liveVersion('blip_b')).toBe(before.version);
          expect(await buildIndexesOf('blip_b')).toEqual([]);
        } finally {
          await proxy.close();
        }
      });

      it('does not ask again a task poll the engine refused with an answer (a key revoked meanwhile)', async () => {
        const before = await build(real.masterKey, 'blip_c', TEN);
        const proxy = await delayingProxy(real.host);
        let refusing = true;
        let refused = 0;
        proxy.tamper.with = (request, _answer, res) => {
          if (!refusing || !taskPoll(request.method, request.path) || !documentsSent(proxy)) return false;
          refused++;
          res.writeHead(403, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              message: 'The provided API key is invalid.',
              code: 'invalid_api_key',
              type: 'auth',
              link: '',
            }),
          );
          return true;
        };
        try {
          const builder = await rebuildThrough(proxy, 'blip_c');
          const error = await builder.commit().catch((e: unknown) => e);
          refusing = false;
          await builder.abort();
          expect((error as Error).message).toMatch(
            /^Meilisearch refused to index documents into blip_c_build_\S+: The provided API key is invalid\. \(invalid_api_key\)$/,
          );
          // Every poll until the abort was refused: any second one would have been counted.
          expect(refused).toBe(1);
          expect(await idsIn('blip_c')).toEqual(sortedIds(TEN));
          expect(await liveVersion('blip_c')).toBe(before.version);
          expect(await buildIndexesOf('blip_c')).toEqual([]);
        } finally {
          await proxy.close();
        }
      });
    });

    it('builds with the indexer key: renamed into place first, swapped in later, the old one deleted', async () => {
      const keys = await ensureKeys(admin, 'swap_a');
      const indexer = keys.get('indexer.key') as string;
      const TEN_IDS = TEN.map((q) => q.id).sort((a, b) => a - b);
      const first = await build(indexer, 'swap_a', TEN, 1_500);
      expect(first.count).toBe(10);
      expect(await idsIn('swap_a')).toEqual(TEN_IDS);
      const settings = await admin.index('swap_a').getSettings();
      expect(settings.searchCutoffMs).toBe(1_500);
      expect(settings.filterableAttributes).toEqual(MEILI_SETTINGS.filterableAttributes);
      expect(settings.sortableAttributes?.slice().sort()).toEqual(
        [...MEILI_SETTINGS.sortableAttributes].sort(),
      );

      const reader = openMeiliCatalogue({
        host: real.host,
        apiKey: keys.get('search.key'),
        index: 'swap_a',
        timeoutMs: 5_000,
      });
      expect((await reader.info()).version).toBe(first.version);
      const second = await build(indexer, 'swap_a', OTHER);
      expect(await idsIn('swap_a')).toEqual(OTHER.map((q) => q.id).sort((a, b) => a - b));
      const uids = (await admin.getRawIndexes({ limit: 1000 })).results.map((i) => i.uid);
      expect(uids.filter((uid) => uid.startsWith('swap_a')).sort()).toEqual([
        'swap_a',
        'swap_a_authors',
        'swap_a_works',
      ]);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await reader.info()).toEqual({ version: second.version, count: OTHER.length });

      // An aborted build leaves the live catalogue exactly as it was, and nothing behind.
      const aborted = await createMeiliBuilder({
        host: real.host,
        apiKey: indexer,
        index: 'swap_a',
        batchSize: 2,
      });
      await aborted.add(TEN);
      await aborted.abort();
      expect(await idsIn('swap_a')).toEqual(OTHER.map((q) => q.id).sort((a, b) => a - b));
      const after = (await admin.getRawIndexes({ limit: 1000 })).results.map((i) => i.uid);
      expect(after.filter((uid) => uid.startsWith('swap_a')).sort()).toEqual([
        'swap_a',
        'swap_a_authors',
        'swap_a_works',
      ]);
    });

    describe('the engine order', () => {
      const byId = [...FIXTURE_QUOTES].sort((a, b) => a.id - b.id);
      const sorts: SortKey[][] = [
        [],
        [{ field: 'category', direction: 'asc' }],
        [{ field: 'genre', direction: 'desc' }],
        [
          { field: 'category', direction: 'desc' },
          { field: 'publish_date', direction: 'asc' },
        ],
        [{ field: 'author_id', direction: 'asc' }],
      ];
      const listOf = (sort: SortKey[], genre?: string): ListQuery => ({
        filters: normaliseFilters(genre === undefined ? {} : { genre: [genre] }),
        sort,
        page: 1,
        limit: 100,
        fields: null,
      });
      const expected = (quotes: readonly Quote[], sort: SortKey[], genre?: string) =>
        quotes
          .filter((q) => genre === undefined || q.genre.some((g) => g.toLowerCase() === genre))
          .sort((a, b) => compareQuotes(a, b, sort))
          .map((q) => project(q, null));
      const firstDocument = async (uid: string) =>
        (
          await admin.index(uid).getDocuments<{ id: number; catalogue_order?: string }>({
            limit: 1,
            fields: ['id', 'catalogue_order'],
          })
        ).results[0];
      /** A reader of `live` with the service's key, through a proxy that keeps every request. */
      const readerOf = (live: string, searchKey: string | undefined) =>
        readerThroughProxy({ host: real.host, apiKey: searchKey, index: live, timeoutMs: 5_000 });
      const fetchSorts = (requests: readonly { path: string; body: string }[]) =>
        requests
          .filter((r) => r.path.endsWith('/documents/fetch'))
          .map((r) => (JSON.parse(r.body) as { sort?: string[] }).sort ?? []);

      it('marks a catalogue sent in id order, and reads it without sorting ties by id, in the same order', async () => {
        const keys = await ensureKeys(admin, 'order_a');
        await build(keys.get('indexer.key') as string, 'order_a', byId);
        expect(await firstDocument('order_a')).toEqual({ id: byId[0]?.id, catalogue_order: 'id' });
        const { proxy, reader, close } = await readerOf('order_a', keys.get('search.key'));
        try {
          await reader.info();
          for (const sort of sorts) {
            for (const genre of [undefined, 'poetry']) {
              const page = await reader.list(listOf(sort, genre));
              expect(page.items, JSON.stringify({ sort, genre })).toEqual(expected(byId, sort, genre));
            }
          }
          const sent = fetchSorts(proxy.requests);
          expect(sent.length).toBeGreaterThanOrEqual(sorts.length * 2);
          expect(sent.filter((sort) => sort.at(-1) === 'id:asc')).toEqual([]);
        } finally {
          await close();
        }
      });

      it('leaves a catalogue sent out of id order unmarked, and reads one swapped in since a mark was read in id order', async () => {
        const keys = await ensureKeys(admin, 'order_b');
        const indexer = keys.get('indexer.key') as string;
        await build(indexer, 'order_b', byId);
        const { proxy, reader, close } = await readerOf('order_b', keys.get('search.key'));
        try {
          // The mark is read here, and the reader is not asked again before the swap.
          await reader.info();
          const backwards = [...byId].reverse();
          await build(indexer, 'order_b', backwards);
          const first = await firstDocument('order_b');
          expect(first).toEqual({ id: backwards[0]?.id });
          for (const sort of sorts) {
            const page = await reader.list(listOf(sort));
            expect(page.items, JSON.stringify(sort)).toEqual(expected(byId, sort));
          }
          await new Promise((resolve) => setTimeout(resolve, 1_100));
          await reader.info();
          proxy.requests.length = 0;
          const page = await reader.list(listOf([{ field: 'category', direction: 'asc' }]));
          expect(page.items).toEqual(expected(byId, [{ field: 'category', direction: 'asc' }]));
          expect(fetchSorts(proxy.requests)).toEqual([['category_sort:asc', 'id:asc']]);
        } finally {
          await close();
        }
      });
    });

    it('lets the service key read its index and nothing else: no write, no other index', async () => {
      const keys = await ensureKeys(admin, 'scope_a');
      await build(keys.get('indexer.key') as string, 'scope_a', TEN);
      await build(
        (await ensureKeys(admin, 'scope_other')).get('indexer.key') as string,
        'scope_other',
        OTHER,
      );
      const service = new Meilisearch({ host: real.host, apiKey: keys.get('search.key'), timeout: 10_000 });
      const own = service.index('scope_a');
      expect((await own.getDocuments({ filter: 'author_id > 0', limit: 0 })).total).toBe(10);
      expect((await own.getDocument(TEN[0]?.id as number, { fields: ['id'] })).id).toBe(TEN[0]?.id);
      const refused = async (call: () => Promise<unknown>) => {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(MeilisearchApiError);
        return (error as MeilisearchApiError).response.status;
      };
      expect(await refused(() => service.index('scope_other').getDocuments({ limit: 1 }))).toBe(403);
      expect(await refused(() => own.addDocuments([{ id: 1 }]))).toBe(403);
      expect(await refused(() => own.deleteDocument(TEN[0]?.id as number))).toBe(403);
      expect(await refused(() => own.updateSettings({ searchCutoffMs: 1 }))).toBe(403);
      expect(await refused(() => service.deleteIndex('scope_a'))).toBe(403);
      expect(await refused(() => service.getKeys())).toBe(403);
      expect(await idsIn('scope_a')).toEqual(TEN.map((q) => q.id).sort((a, b) => a - b));
      expect(keySpecs('scope_a')[1]?.indexes).toEqual(['scope_a', 'scope_a_authors', 'scope_a_works']);
    });
  },
);
