/**
 * The Meilisearch read adapter.
 *
 * 1. The port's behaviour suite, unchanged, against a real engine (found by
 *    `test-support/meilisearch-engine.ts`: a `meilisearch` binary, `MEILI_URL`, or a container),
 *    else skipped loudly. The indexer builds with the deployment's indexer key and the reader
 *    reads with the service's key, both as `deploy/meili-keys.ts` makes them.
 * 2. Without any engine: an unreachable or silent engine gives CatalogueUnavailableError in
 *    bounded time, and the adapter serves as soon as an engine answers.
 * 3. Protocol tests against a scripted HTTP server: the bytes the adapter sends and how it reads
 *    the engine's answers. They pin down the adapter's side of the protocol; the behaviour suite
 *    is what proves the engine agrees.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateQuotes } from '../../../indexer/generate.ts';
import { buildApp } from '../../app.ts';
import { loadConfig } from '../../config.ts';
import { buildFixtureCatalogue, type FixtureCatalogue, rawHttp } from '../../test-app.ts';
import { longLabelQuotes } from '../../test-support/long-labels.ts';
import {
  buildMeiliCatalogue,
  buildWith,
  createDeploymentKeys,
} from '../../test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from '../../test-support/meilisearch-engine.ts';
import { type CatalogueHarness, describeCatalogueBehaviour } from '../port.suite.ts';
import {
  type CatalogueIndex,
  CatalogueUnavailableError,
  codePointLength,
  type ListQuery,
  normaliseFilters,
  type Quote,
  SORT_FIELDS,
  type SortKey,
} from '../port.ts';
import { openSqliteCatalogue } from '../sqlite/catalogue.ts';
import {
  COUNT_TTL_MS,
  ENGINE_BUSY_RETRY_AFTER_S,
  INFO_TTL_MS,
  openMeiliCatalogue,
  toPortError,
} from './catalogue.ts';
import {
  buildFilter,
  countRequest,
  type FetchRequest,
  filterExpression,
  infoRequest,
  pageRequest,
  pickRequest,
  SHALLOW_OFFSET,
} from './request.ts';
import { type RunReader, readPageNarrowed } from './runs.ts';

// ---------------------------------------------------------------------------------------------
// 1. Behaviour suite

const SUITE = 'catalogue behaviour';
const source = await meiliEngineSource(inject('containerRuntime'));

/**
 * The suite on a catalogue as each test gives its quotes, and again sent in id order: the
 * indexer then marks the catalogue as held in id order by the engine, and pages are read without
 * the sort of ties by id (meilisearch/request.ts, inEngineOrder). Both must answer the same.
 */
for (const inIdOrder of [false, true]) {
  describeCatalogueBehaviour(
    inIdOrder ? 'meilisearch, quotes sent in id order' : 'meilisearch',
    async (): Promise<CatalogueHarness> => {
      if ('skip' in source) throw new Error(source.skip);
      const engine = await source.start(SUITE);
      const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
      // A fresh live name per run, so a shared engine (MEILI_URL) keeps its own indexes.
      const live = `quotes_suite_${randomBytes(4).toString('hex')}`;
      const { indexerKey, searchKey } = await createDeploymentKeys(admin, live);
      const opened: CatalogueIndex[] = [];
      return {
        async load(given: Quote[]) {
          const quotes = inIdOrder ? [...given].sort((a, b) => a.id - b.id) : given;
          // Tiny batches: several document tasks in flight, as with a large file.
          await buildWith(
            { host: engine.host, apiKey: indexerKey.key, index: live, batchSize: 9, taskTimeoutMs: 60_000 },
            quotes,
            7,
          );
          const index = openMeiliCatalogue({
            host: engine.host,
            apiKey: searchKey.key,
            index: live,
            timeoutMs: 5_000,
          });
          opened.push(index);
          return index;
        },
        async teardown() {
          for (const index of opened) await index.close();
          try {
            const leftovers = (await admin.getRawIndexes({ limit: 1000 })).results.filter((i) =>
              i.uid.startsWith(live),
            );
            // Nothing but the live index may remain: no build index of any run.
            expect(leftovers.map((i) => i.uid).sort()).toEqual(
              [live, `${live}_authors`, `${live}_works`].sort(),
            );
            for (const { uid } of leftovers) await admin.deleteIndex(uid).waitTask({ timeout: 30_000 });
            await admin.deleteKey(indexerKey.uid);
            await admin.deleteKey(searchKey.uid);
          } finally {
            await engine.stop();
          }
        },
      };
    },
    'skip' in source ? { skip: source.skip } : {},
  );
}

// ---------------------------------------------------------------------------------------------
// 1b. Every page, deep ones read from the other end, exactly as SQLite answers it

const DEEP = 'deep pages';
const deepSource = 'skip' in source ? undefined : source;
if (deepSource === undefined) announceSkip(DEEP, (source as { skip: string }).skip);

describe.skipIf(deepSource === undefined)('every page on a real engine, as SQLite answers it', () => {
  // Few authors, works and categories: long runs of ties that only id orders.
  const quotes: Quote[] = [...generateQuotes(240, 7)].map((q) => ({
    ...q,
    quote_length: codePointLength(q.quote),
  }));
  let engine: MeiliEngine | undefined;
  let sqlite: CatalogueIndex;
  let meili: CatalogueIndex;
  /** Every deep page of a run sort narrowed by ids, however short its walk. */
  let narrowing: CatalogueIndex;
  let runReader: RunReader;
  let uid: string;
  let fixture: FixtureCatalogue | undefined;
  let removeCatalogue: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    fixture = await buildFixtureCatalogue(quotes);
    sqlite = openSqliteCatalogue({ path: fixture.path });
    engine = await (deepSource as Exclude<typeof deepSource, undefined>).start(DEEP);
    const catalogue = await buildMeiliCatalogue(engine, quotes);
    removeCatalogue = catalogue.remove;
    // Every page planned from a count, so that the second half of the matches is read backwards.
    meili = openMeiliCatalogue({
      host: engine.host,
      apiKey: catalogue.env.MEILI_API_KEY,
      index: catalogue.env.MEILI_INDEX as string,
      timeoutMs: 5_000,
      shallowOffset: 0,
    });
    narrowing = openMeiliCatalogue({
      host: engine.host,
      apiKey: catalogue.env.MEILI_API_KEY,
      index: catalogue.env.MEILI_INDEX as string,
      timeoutMs: 5_000,
      shallowOffset: 0,
      narrowFrom: 0,
    });
    const post = async <T>(path: string, body: object): Promise<T> => {
      const response = await fetch(`${engine?.host}/indexes/${catalogue.env.MEILI_INDEX}/${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${catalogue.env.MEILI_API_KEY}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as T;
    };
    runReader = { fetch: (body) => post('documents/fetch', body), search: (body) => post('search', body) };
    uid = catalogue.env.MEILI_INDEX as string;
  });
  afterAll(async () => {
    await sqlite?.close();
    await meili?.close();
    await removeCatalogue?.();
    await engine?.stop();
    fixture?.remove();
  });

  const FILTERS = [{}, normaliseFilters({ category: ['poetry'] }), normaliseFilters({ author_like: ['a'] })];

  for (const field of SORT_FIELDS) {
    for (const direction of ['asc', 'desc'] as const) {
      it(`sort=${field}&order=${direction}: every page of 1, 7 and 100, past the last one too`, async () => {
        for (const filters of FILTERS) {
          const total = (await sqlite.list({ filters, sort: [], page: 1, limit: 1, fields: ['id'] })).total;
          expect(total, JSON.stringify(filters)).toBeGreaterThan(10);
          for (const limit of [1, 7, 100]) {
            const pages = Math.ceil(total / limit);
            // Pages of one: the first and last few, either side of the middle, and past the end.
            const wanted =
              limit === 1
                ? [1, 2, Math.floor(pages / 2), Math.floor(pages / 2) + 1, pages - 1, pages, pages + 1]
                : Array.from({ length: pages + 1 }, (_, i) => i + 1);
            for (const page of wanted) {
              const query: ListQuery = {
                filters,
                sort: [{ field, direction }],
                page,
                limit,
                fields: ['id', field === 'genre' ? 'genre' : 'author'],
              };
              const label = `${JSON.stringify(filters)} page ${page} of ${limit}`;
              const expected = await sqlite.list(query);
              expect(await meili.list(query), label).toEqual(expected);
              if (
                ['category', 'id', 'author_id', 'work_id', 'quote_length', 'publish_date'].includes(field)
              ) {
                expect(await narrowing.list(query), label).toEqual(expected);
              }
            }
          }
        }
      });
    }
  }

  it('reads pages narrowed by counts (category runs, integer keys) exactly as SQLite orders them', async () => {
    // No sort at all is the catalogue's order, by ascending id.
    const sorts: SortKey[][] = [[]];
    for (const field of ['category', 'id', 'author_id', 'work_id', 'quote_length', 'publish_date'] as const) {
      for (const direction of ['asc', 'desc'] as const) {
        sorts.push([{ field, direction }]);
        if (field !== 'id') {
          sorts.push([
            { field, direction },
            { field: 'id', direction: 'desc' },
          ]);
        }
      }
    }
    let narrowed = 0;
    for (const filters of FILTERS) {
      const total = (await sqlite.list({ filters, sort: [], page: 1, limit: 1, fields: ['id'] })).total;
      for (const sort of sorts) {
        for (const limit of [1, 7, 100]) {
          const pages = Math.ceil(total / limit);
          for (let page = 1; page <= pages; page += limit === 1 ? 11 : limit === 7 ? 3 : 1) {
            const query: ListQuery = { filters, sort, page, limit, fields: ['id'] };
            const label = `${JSON.stringify(filters)} ${JSON.stringify(sort)} page ${page} of ${limit}`;
            const read = await readPageNarrowed(query, total, runReader, 0);
            expect(
              read?.map((d) => d.id),
              label,
            ).toEqual((await sqlite.list(query)).items.map((q) => q.id));
            narrowed++;
          }
        }
      }
    }
    expect(narrowed).toBeGreaterThan(100);
  });

  it('gives up a plan made on counts of another catalogue, rather than misplace the page', async () => {
    const query: ListQuery = {
      filters: {},
      sort: [{ field: 'category', direction: 'asc' }],
      page: 20,
      limit: 7,
      fields: ['id'],
    };
    // A total the engine's counts do not add up to: the page is not placed on them.
    expect(await readPageNarrowed(query, quotes.length + 1, runReader, 0)).toBeUndefined();
    // Documents of another build than the counts: the page is not read from them.
    const otherBuild: RunReader = {
      fetch: async (body) => {
        const answer = await runReader.fetch(body);
        return { ...answer, results: answer.results.map((d) => ({ ...d, catalogue_version: 'another' })) };
      },
      search: (body) => runReader.search(body),
    };
    expect(await readPageNarrowed(query, quotes.length, otherBuild, 0)).toBeUndefined();
    expect(await readPageNarrowed(query, quotes.length, runReader, 0)).toHaveLength(7);
  });

  it('reads pages the plain way from an index that cannot count ranges of publish_order', async () => {
    const admin = new Meilisearch({ host: engine?.host as string, apiKey: engine?.masterKey });
    const index = admin.index(uid);
    const filterable = (await index.getFilterableAttributes()) ?? [];
    await index.updateFilterableAttributes(filterable.filter((a) => a !== 'publish_order')).waitTask();
    try {
      const query: ListQuery = {
        filters: {},
        sort: [{ field: 'publish_date', direction: 'desc' }],
        page: 9,
        limit: 7,
        fields: ['id'],
      };
      // Through the client, so that the engine's refusal reaches the reader as it does in the adapter.
      const client = new Meilisearch({ host: engine?.host as string, apiKey: engine?.masterKey }).index(uid);
      const refusing: RunReader = {
        fetch: (body) => client.httpRequest.post({ path: `indexes/${uid}/documents/fetch`, body }),
        search: (body) => client.httpRequest.post({ path: `indexes/${uid}/search`, body }),
      };
      expect(await readPageNarrowed(query, quotes.length, refusing, 0)).toBeUndefined();
      expect(await narrowing.list(query)).toEqual(await sqlite.list(query));
    } finally {
      await index.updateFilterableAttributes(filterable).waitTask();
    }
  });

  it('draws random quotes from the whole catalogue, in the count', async () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) seen.add((await meili.random({}, ['id']))?.id as number);
    const ids = new Set(quotes.map((q) => q.id));
    expect([...seen].every((id) => ids.has(id))).toBe(true);
    // 200 draws among 240 quotes reach about 137 distinct ones; a stuck offset would reach few.
    expect(seen.size).toBeGreaterThan(100);
  });
});

// ---------------------------------------------------------------------------------------------
// 1c. Long text values, every way a page is read, exactly as SQLite answers it

const LONG = 'long text values';
if (deepSource === undefined) announceSkip(LONG, (source as { skip: string }).skip);

describe.skipIf(deepSource === undefined)('long text values on a real engine, as SQLite orders them', () => {
  // Values agreeing on 468 bytes and more (test-support/long-labels.ts), so that every sort meets them.
  const quotes = longLabelQuotes(320);
  let engine: MeiliEngine | undefined;
  let sqlite: CatalogueIndex;
  /** Read forward up to the default offset, then from a count, from the nearer end. */
  let plain: CatalogueIndex;
  /** Every page planned from a count: the second half read backwards. */
  let counted: CatalogueIndex;
  /** Every deep page of a run or integer sort narrowed by counts, however short its walk. */
  let narrowing: CatalogueIndex;
  let fixture: FixtureCatalogue | undefined;
  let removeCatalogue: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    fixture = await buildFixtureCatalogue(quotes);
    sqlite = openSqliteCatalogue({ path: fixture.path });
    engine = await (deepSource as Exclude<typeof deepSource, undefined>).start(LONG);
    const catalogue = await buildMeiliCatalogue(engine, quotes);
    removeCatalogue = catalogue.remove;
    const options = {
      host: engine.host,
      apiKey: catalogue.env.MEILI_API_KEY,
      index: catalogue.env.MEILI_INDEX as string,
      timeoutMs: 5_000,
    };
    plain = openMeiliCatalogue(options);
    counted = openMeiliCatalogue({ ...options, shallowOffset: 0 });
    narrowing = openMeiliCatalogue({ ...options, shallowOffset: 0, narrowFrom: 0 });
  });
  afterAll(async () => {
    for (const index of [sqlite, plain, counted, narrowing]) await index?.close();
    await removeCatalogue?.();
    await engine?.stop();
    fixture?.remove();
  });

  const key = (field: SortKey['field'], direction: 'asc' | 'desc' = 'asc'): SortKey => ({ field, direction });
  const SORTS: SortKey[][] = [
    ...(['author', 'work', 'category', 'genre'] as const).flatMap((field) => [
      [key(field)],
      [key(field, 'desc')],
      [key(field), key('id', 'desc')],
    ]),
    [key('category', 'desc'), key('author')],
    [key('genre'), key('work', 'desc')],
    [key('quote_length'), key('author')],
    [key('publish_date', 'desc'), key('category', 'desc')],
    [key('author_id'), key('genre', 'desc')],
  ];
  const FILTERS = [{}, normaliseFilters({ author_like: ['a'] })];

  for (const sort of SORTS) {
    const label = sort.map((k) => `${k.field} ${k.direction}`).join(', ');
    it(`${label}: every page of 7 and 50, however it is read`, async () => {
      for (const filters of FILTERS) {
        const total = (await sqlite.list({ filters, sort: [], page: 1, limit: 1, fields: ['id'] })).total;
        expect(total).toBeGreaterThan(20);
        for (const limit of [7, 50]) {
          for (let page = 1; page <= Math.ceil(total / limit); page++) {
            const query: ListQuery = { filters, sort, page, limit, fields: ['id'] };
            const expected = await sqlite.list(query);
            const where = `${JSON.stringify(filters)} page ${page} of ${limit}`;
            expect(await plain.list(query), where).toEqual(expected);
            expect(await counted.list(query), where).toEqual(expected);
            expect(await narrowing.list(query), where).toEqual(expected);
          }
        }
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------
// 2. Unavailable engines

const QUERY: ListQuery = { filters: {}, sort: [], page: 1, limit: 5, fields: null };

/** Every port call, so each is proven to fail the same bounded way. */
const CALLS: [string, (index: CatalogueIndex) => Promise<unknown>][] = [
  ['info', (index) => index.info()],
  ['list', (index) => index.list(QUERY)],
  ['get', (index) => index.get(1, null)],
  ['random', (index) => index.random({}, null)],
];

async function failure(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await call();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error('the call succeeded');
}

/** A port nothing listens on: bound, then released. */
async function refusedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('an unreachable engine', () => {
  for (const [name, call] of CALLS) {
    it(`makes ${name} fail with CatalogueUnavailableError at once when the port refuses connections`, async () => {
      const port = await refusedPort();
      const index = openMeiliCatalogue({
        host: `http://127.0.0.1:${port}`,
        apiKey: 'k',
        index: 'quotes',
        timeoutMs: 2_000,
      });
      const { error, ms } = await failure(() => call(index));
      expect(error).toBeInstanceOf(CatalogueUnavailableError);
      expect((error as Error).message).toBe(
        `Meilisearch at http://127.0.0.1:${port} is unreachable (ECONNREFUSED)`,
      );
      expect(ms).toBeLessThan(3_000);
      await index.close();
    });
  }
});

describe('an engine that accepts connections but never answers', () => {
  let server: ReturnType<typeof createNetServer> | undefined;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    server = undefined;
  });

  for (const [name, call] of CALLS) {
    it(`makes ${name} fail with CatalogueUnavailableError once timeoutMs has passed`, async () => {
      server = createNetServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => {});
      });
      await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
      const { port } = server.address() as AddressInfo;
      const index = openMeiliCatalogue({
        host: `http://127.0.0.1:${port}`,
        apiKey: 'k',
        index: 'quotes',
        timeoutMs: 300,
      });
      const { error, ms } = await failure(() => call(index));
      expect(error).toBeInstanceOf(CatalogueUnavailableError);
      expect((error as Error).message).toBe(
        `Meilisearch at http://127.0.0.1:${port} did not answer within 300 ms`,
      );
      expect(ms).toBeGreaterThanOrEqual(290);
      expect(ms).toBeLessThan(1_300);
      expect(sockets.size).toBeGreaterThan(0);
      await index.close();
    });
  }
});

// ---------------------------------------------------------------------------------------------
// 3. Protocol against a scripted engine

interface Recorded {
  method: string;
  url: string;
  authorization: string | undefined;
  body: unknown;
}
type Reply = { status: number; json?: unknown; text?: string; delayMs?: number };

/** An HTTP server that records requests and answers them with `reply` (none when undefined). */
async function scriptedEngine(reply: (request: Recorded) => Reply | undefined): Promise<{
  host: string;
  requests: Recorded[];
  port: number;
  close(): Promise<void>;
}> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: text === '' ? undefined : JSON.parse(text),
      };
      requests.push(recorded);
      const answer = reply(recorded);
      // No answer at all: an engine that hangs.
      if (answer === undefined) return;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, {
          'content-type': answer.json === undefined ? 'text/html' : 'application/json',
        });
        res.end(answer.json === undefined ? (answer.text ?? '') : JSON.stringify(answer.json));
      };
      if (answer.delayMs === undefined) send();
      else setTimeout(send, answer.delayMs);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    host: `http://127.0.0.1:${port}`,
    requests,
    port,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** An answer of `POST /documents/fetch`. */
const fetched = (results: object[], total: number, offset = 0, limit = 5) => ({
  results,
  offset,
  limit,
  total,
});
const apiError = (status: number, code: string, message: string): Reply => ({
  status,
  json: { message, code, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` },
});
const FETCH = '/indexes/quotes/documents/fetch';

describe('the read protocol', () => {
  let engine: Awaited<ReturnType<typeof scriptedEngine>> | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  // These engines script the plain read path: no page is narrowed by counts.
  const open = (host: string, timeoutMs = 2_000) =>
    openMeiliCatalogue({
      host,
      apiKey: 'service-key',
      index: 'quotes',
      timeoutMs,
      narrowFrom: Number.POSITIVE_INFINITY,
      // The counted way of reading deep pages, which catalogues with gaps in their ids take.
      idRanges: false,
    });

  it('reads a shallow page with one documents fetch, the key as a bearer token', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: fetched([{ id: 3, author: 'A' }], 12, 2, 2) }));
    const query: ListQuery = {
      filters: normaliseFilters({ author_like: ['bron'] }),
      sort: [{ field: 'publish_date', direction: 'desc' }],
      page: 2,
      limit: 2,
      fields: ['id', 'author'],
    };
    const result = await open(engine.host).list(query);
    expect(result).toEqual({ items: [{ id: 3, author: 'A' }], total: 12 });
    const plan = pageRequest(query);
    expect(engine.requests).toEqual([
      {
        method: 'POST',
        url: FETCH,
        authorization: 'Bearer service-key',
        body: 'request' in plan ? plan.request : undefined,
      },
    ]);
  });

  it('sorts a text key by as many chunks as the first document of the catalogue records', async () => {
    engine = await scriptedEngine((request) =>
      (request.body as FetchRequest).fields?.includes('catalogue_sort_chunks')
        ? {
            status: 200,
            json: fetched(
              [{ catalogue_version: 'v7', catalogue_sort_chunks: { author: 3, work: 2 } }],
              12,
              0,
              1,
            ),
          }
        : { status: 200, json: fetched([{ id: 3, author: 'A' }], 12, 2, 2) },
    );
    const query: ListQuery = {
      filters: normaliseFilters({}),
      sort: [{ field: 'author', direction: 'desc' }],
      page: 2,
      limit: 2,
      fields: ['id', 'author'],
    };
    expect(await open(engine.host).list(query)).toEqual({ items: [{ id: 3, author: 'A' }], total: 12 });
    expect(engine.requests.map((r) => r.body)).toEqual([
      infoRequest(),
      {
        sort: ['author_sort:desc', 'author_sort_2:desc', 'author_sort_3:desc', 'id:asc'],
        offset: 2,
        limit: 2,
        fields: ['id', 'author'],
      },
    ]);
  });

  it('asks the engine for uncompressed answers (compressing and inflating them cost more than the listing)', async () => {
    const encodings: Array<string | undefined> = [];
    const server = createServer((req, res) => {
      encodings.push(req.headers['accept-encoding']);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(fetched([{ id: 1 }], 1, 0, 1)));
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await open(host).list({ filters: normaliseFilters({}), sort: [], page: 1, limit: 1, fields: ['id'] });
      expect(encodings).toEqual(['identity']);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it('drops every attribute the engine returns beyond the requested fields', async () => {
    engine = await scriptedEngine(() => ({
      status: 200,
      json: fetched([{ author: 'A', id: 3, author_key: 'a', catalogue_version: 'v' }], 1),
    }));
    const result = await open(engine.host).list({ ...QUERY, fields: ['id', 'author'] });
    expect(result.items).toEqual([{ id: 3, author: 'A' }]);
    expect(Object.keys(result.items[0] ?? {})).toEqual(['id', 'author']);
  });

  it('reads a deep page in the second half from the other end, and puts it back in order', async () => {
    const total = 10_000;
    engine = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      if (body.limit === 0) return { status: 200, json: fetched([], total, 0, 0) };
      // The engine answers in the reversed order it was asked for.
      return { status: 200, json: fetched([{ id: 9_999 }, { id: 9_998 }], total, body.offset, body.limit) };
    });
    const query: ListQuery = { ...QUERY, page: 4_999, limit: 2, fields: ['id'] };
    expect(await open(engine.host).list(query)).toEqual({ items: [{ id: 9_998 }, { id: 9_999 }], total });
    expect(engine.requests.map((r) => r.body)).toEqual([
      countRequest(undefined),
      { sort: ['id:desc'], offset: 2, limit: 2, fields: ['id'] },
    ]);
  });

  it('answers a page past the last from a count, without asking for that page', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: fetched([], 42, 0, 0) }));
    for (const page of [SHALLOW_OFFSET, 2_000_000, Number.MAX_SAFE_INTEGER]) {
      const result = await open(engine.host).list({ ...QUERY, page, limit: 100 });
      expect(result).toEqual({ items: [], total: 42 });
    }
    expect(engine.requests.map((r) => r.body)).toEqual([
      countRequest(undefined),
      countRequest(undefined),
      countRequest(undefined),
    ]);
  });

  it('plans a deep page again when the catalogue changed between the count and the page', async () => {
    let counts = 0;
    engine = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      if (body.limit === 0) {
        counts++;
        return { status: 200, json: fetched([], 10_000, 0, 0) };
      }
      // A smaller catalogue was swapped in: 6,000 quotes.
      return { status: 200, json: fetched([{ id: 1 }], 6_000, body.offset, body.limit) };
    });
    const query: ListQuery = { ...QUERY, page: 2_000, limit: 2, fields: ['id'] };
    const result = await open(engine.host).list(query);
    expect(result.total).toBe(6_000);
    expect(counts).toBe(1);
    const bodies = engine.requests.map((r) => r.body as { offset: number; sort: string[] });
    // First planned on 10,000 (forward at 3,998), then on 6,000 (backwards at 2,000).
    expect(bodies[1]).toMatchObject({ offset: 3_998, sort: ['id:asc'] });
    expect(bodies[2]).toMatchObject({ offset: 2_000, sort: ['id:desc'] });
  });

  it('gives a deep page, count and page together, no longer than the timeout', async () => {
    // Each read alone is within the timeout; the two together are not.
    engine = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      return { status: 200, json: fetched([], 10_000, body.offset, body.limit), delayMs: 200 };
    });
    const index = open(engine.host, 300);
    const { error, ms } = await failure(() => index.list({ ...QUERY, page: 1_000, limit: 2 }));
    expect(error).toBeInstanceOf(CatalogueUnavailableError);
    expect((error as Error).message).toMatch(/did not answer within 300 ms/);
    expect(ms).toBeLessThan(390);
    const random = await failure(() => index.random({}, ['id']));
    expect(random.error).toBeInstanceOf(CatalogueUnavailableError);
    expect(random.ms).toBeLessThan(390);
  });

  /**
   * Five deep pages asked at once of an adapter that reads three at a time, from an engine that
   * takes `readMs` for each page; each settles with its time from the start.
   */
  const fiveDeepPagesAtOnce = async (readMs: number, timeoutMs: number) => {
    const scripted = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      if (body.limit === 0) return { status: 200, json: fetched([], 10_000, 0, 0) };
      return { status: 200, json: fetched([{ id: 1 }, { id: 2 }], 10_000, body.offset, 2), delayMs: readMs };
    });
    engine = scripted;
    const index = openMeiliCatalogue({
      host: scripted.host,
      apiKey: 'k',
      index: 'quotes',
      timeoutMs,
      maxDeepReads: 3,
      narrowFrom: Number.POSITIVE_INFINITY,
      idRanges: false,
    });
    const started = performance.now();
    const settled = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        index.list({ ...QUERY, page: 1_000 + i, limit: 2, fields: ['id'] }).then(
          () => ({ ok: true, ms: performance.now() - started }),
          (e: unknown) => ({ ok: false, e, ms: performance.now() - started }),
        ),
      ),
    );
    return { index, settled, requests: scripted.requests };
  };

  it('reads a few deep pages at once; the others wait for a read to end, and are served', async () => {
    const { settled, requests } = await fiveDeepPagesAtOnce(150, 2_000);
    expect(settled.map((r) => r.ok)).toEqual([true, true, true, true, true]);
    // Three read at once; the two others only once a read had ended.
    const times = settled.map((r) => r.ms).sort((a, b) => a - b);
    expect(times[3]).toBeGreaterThanOrEqual(290);
    expect(requests.filter((r) => (r.body as { limit: number }).limit > 0)).toHaveLength(5);
  });

  it('answers a deep page unavailable for a second when no read ends within half its time', async () => {
    const { index, settled } = await fiveDeepPagesAtOnce(600, 1_000);
    expect(settled.filter((r) => r.ok)).toHaveLength(3);
    const shed = settled.filter((r) => !r.ok);
    expect(shed).toHaveLength(2);
    for (const r of shed) {
      expect((r as { e: unknown }).e).toBeInstanceOf(CatalogueUnavailableError);
      expect((r as { e: CatalogueUnavailableError }).e.retryAfterSeconds).toBe(ENGINE_BUSY_RETRY_AFTER_S);
      // Given up at half the call's time, before any read ended, never past the call's time.
      expect(r.ms).toBeLessThan(600);
    }
    // Once the reads end, the next pages are served again.
    expect((await index.list({ ...QUERY, page: 2_000, limit: 2, fields: ['id'] })).total).toBe(10_000);
  });

  it('gets a quote by its primary key, and null when nothing has it', async () => {
    engine = await scriptedEngine((request) =>
      request.url.startsWith('/indexes/quotes/documents/42')
        ? { status: 200, json: { id: 42, author_key: 'x' } }
        : apiError(404, 'document_not_found', 'Document `43` not found.'),
    );
    const index = open(engine.host);
    expect(await index.get(42, ['id'])).toEqual({ id: 42 });
    expect(await index.get(43, ['id'])).toBeNull();
    expect(engine.requests.map((r) => [r.method, r.url])).toEqual([
      ['GET', '/indexes/quotes/documents/42?fields=id'],
      ['GET', '/indexes/quotes/documents/43?fields=id'],
    ]);
    // A missing document says nothing of the engine's health.
    expect(await index.info().catch((e: unknown) => e)).not.toBeInstanceOf(CatalogueUnavailableError);
  });

  it('draws random quotes as an exact count, then the match at a uniform offset', async () => {
    engine = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      if (body.limit === 0) return { status: 200, json: fetched([], 5, 0, 0) };
      return { status: 200, json: fetched([{ id: body.offset }], 5, body.offset, 1) };
    });
    const index = open(engine.host);
    const filters = normaliseFilters({ genre: ['gothic'] });
    const offsets = new Set<number>();
    for (let i = 0; i < 60; i++) offsets.add((await index.random(filters, ['id']))?.id as number);
    // Every offset of the 5 matches is drawn (P(miss one) < 5 × 0.8^60 ≈ 1e-5), none past them.
    expect([...offsets].sort()).toEqual([0, 1, 2, 3, 4]);
    const filter = filterExpression(buildFilter(filters));
    expect(engine.requests[0]?.body).toEqual(countRequest(filter));
    const pick = engine.requests[1]?.body as { offset: number };
    expect(pick).toEqual(pickRequest(filter, pick.offset, ['id']));
  });

  it('draws again when the catalogue changed between the count and the pick', async () => {
    let picks = 0;
    engine = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      if (body.limit === 0) return { status: 200, json: fetched([], 1_000, 0, 0) };
      picks++;
      // First pick: the catalogue shrank to 1 quote (no hit at the offset); then it holds.
      return picks === 1
        ? { status: 200, json: fetched([], 1, body.offset, 1) }
        : { status: 200, json: fetched([{ id: 7 }], 1, body.offset, 1) };
    });
    expect(await open(engine.host).random(normaliseFilters({ genre: ['gothic'] }), ['id'])).toEqual({
      id: 7,
    });
    expect(engine.requests.map((r) => (r.body as { offset: number }).offset)).toEqual([
      0,
      expect.any(Number),
      0,
    ]);
  });

  /** What an engine of {@link catalogueOfIds} does from some point on: each answer late, each range of ids from another catalogue. */
  interface Later {
    delayMs?: number;
    rangeVersion?: string;
  }

  /** An engine holding `ids` (ascending) in catalogue `version`, answering what `random({})` reads. */
  const catalogueOfIds = (ids: readonly number[], version = 'v1', later: Later = {}) => {
    const answer = (request: Recorded): Reply => {
      const byId = /^\/indexes\/quotes\/documents\/(\d+)\?/.exec(request.url);
      if (byId !== null) {
        const id = Number(byId[1]);
        return ids.includes(id)
          ? { status: 200, json: { id, catalogue_version: version } }
          : apiError(404, 'document_not_found', `Document \`${id}\` not found.`);
      }
      const body = request.body as { limit: number; offset: number; sort?: string[]; filter?: string };
      // The one filter these tests send: a range of ids.
      const range = /^id >= (\d+) AND id <= (\d+)$/.exec(body.filter ?? '');
      const matches =
        body.filter === undefined
          ? ids
          : range === null
            ? []
            : ids.filter((id) => id >= Number(range[1]) && id <= Number(range[2]));
      const sorted = body.sort?.[0] === 'id:desc' ? [...matches].reverse() : matches;
      const results = sorted
        .slice(body.offset, body.offset + body.limit)
        .map((id) => ({ id, catalogue_version: range === null ? version : (later.rangeVersion ?? version) }));
      return { status: 200, json: fetched(results, matches.length, body.offset, body.limit) };
    };
    return scriptedEngine((request) => {
      const reply = answer(request);
      return later.delayMs === undefined ? reply : { ...reply, delayMs: later.delayMs };
    });
  };

  /** Every page planned as a deep one, with the id ranges of the adapter's defaults. */
  const openDeep = (host: string) =>
    openMeiliCatalogue({ host, apiKey: 'k', index: 'quotes', timeoutMs: 2_000, shallowOffset: 0 });

  it('reads a deep unfiltered page in id order as its range of ids when the ids have no gap', async () => {
    engine = await catalogueOfIds([5, 6, 7, 8, 9, 10, 11]);
    const index = openDeep(engine.host);
    const page = (p: number, limit: number, direction?: 'asc' | 'desc') =>
      index.list({
        filters: {},
        sort: direction === undefined ? [] : [{ field: 'id', direction }],
        page: p,
        limit,
        fields: ['id'],
      });
    expect(await page(2, 3)).toEqual({ items: [{ id: 8 }, { id: 9 }, { id: 10 }], total: 7 });
    expect(await page(3, 3, 'asc')).toEqual({ items: [{ id: 11 }], total: 7 });
    expect(await page(2, 3, 'desc')).toEqual({ items: [{ id: 8 }, { id: 7 }, { id: 6 }], total: 7 });
    expect(await page(3, 3, 'desc')).toEqual({ items: [{ id: 5 }], total: 7 });
    // The version, both ends of the ids once, then one read of a range per page: no count, no walk.
    const pages = engine.requests.slice(3).map((r) => r.body as { filter?: string; offset: number });
    expect(pages.map((b) => [b.filter, b.offset])).toEqual([
      ['id >= 8 AND id <= 10', 0],
      ['id >= 11 AND id <= 11', 0],
      ['id >= 6 AND id <= 8', 0],
      ['id >= 5 AND id <= 5', 0],
    ]);
    await index.close();
  });

  it('passes a deep page in id order through as bytes, the version of each quote taken out', async () => {
    engine = await catalogueOfIds([5, 6, 7, 8, 9, 10, 11]);
    const index = openDeep(engine.host);
    const envelope = {
      head: '{"items":',
      tail: (total: number, count: number) => `,"of":[${count},${total}]}`,
    };
    const page = (p: number, direction: 'asc' | 'desc') =>
      index.listJson?.(
        { filters: {}, sort: [{ field: 'id', direction }], page: p, limit: 3, fields: ['id'] },
        envelope,
      );
    expect(String(await page(2, 'asc'))).toBe('{"items":[{"id":8},{"id":9},{"id":10}],"of":[3,7]}');
    expect(String(await page(2, 'desc'))).toBe('{"items":[{"id":8},{"id":7},{"id":6}],"of":[3,7]}');
    expect(String(await page(3, 'desc'))).toBe('{"items":[{"id":5}],"of":[1,7]}');
    // Past the last page the counted way confirms it: a total and no quote.
    expect(await page(4, 'asc')).toEqual({ items: [], total: 7 });
    await index.close();
  });

  it('gives a deep page in id order read as bytes and then the plain way no longer than the timeout', async () => {
    // Quick at first, so that the version and both ends of the ids are known; then every read
    // takes 200 ms and each range of ids comes from another catalogue, so the bytes are refused
    // and the page is read again the plain way, within what is left of the same timeout.
    const later: Later = {};
    engine = await catalogueOfIds([5, 6, 7, 8, 9, 10, 11], 'v1', later);
    const index = openMeiliCatalogue({
      host: engine.host,
      apiKey: 'k',
      index: 'quotes',
      timeoutMs: 500,
      shallowOffset: 0,
    });
    const envelope = { head: '', tail: () => '' };
    const query: ListQuery = { filters: {}, sort: [], page: 2, limit: 3, fields: ['id'] };
    expect(String(await index.listJson?.(query, envelope))).toBe('[{"id":8},{"id":9},{"id":10}]');
    later.delayMs = 200;
    later.rangeVersion = 'v2';
    const started = performance.now();
    const settled = await index.listJson?.(query, envelope).then(
      () => 'answered',
      (error: unknown) => error,
    );
    const ms = performance.now() - started;
    expect(settled).toBeInstanceOf(CatalogueUnavailableError);
    expect((settled as Error).message).toMatch(/did not answer within 500 ms/);
    expect(ms).toBeLessThan(590);
    await index.close();
  });

  it('reads deep pages the counted way when the ids have a gap', async () => {
    engine = await catalogueOfIds([5, 6, 8, 9]);
    const index = openDeep(engine.host);
    const result = await index.list({ filters: {}, sort: [], page: 2, limit: 2, fields: ['id'] });
    expect(result).toEqual({ items: [{ id: 8 }, { id: 9 }], total: 4 });
    const filters = engine.requests.map((r) => (r.body as { filter?: string } | undefined)?.filter);
    expect(filters.filter((f) => f?.startsWith('id >=') === true)).toEqual([]);
    await index.close();
  });

  it('draws an unfiltered random quote as a uniform id read by key when the ids have no gap', async () => {
    engine = await catalogueOfIds([11, 12, 13, 14]);
    const index = open(engine.host);
    const seen = new Set<number>();
    for (let i = 0; i < 60; i++) seen.add((await index.random({}, ['id']))?.id as number);
    // Every id is drawn (P(miss one) < 4 × 0.75^60 ≈ 1e-7), none outside them.
    expect([...seen].sort()).toEqual([11, 12, 13, 14]);
    // The version, then both ends of the ids once; after that, one read by key per draw.
    const reads = engine.requests.map((r) => `${r.method} ${r.url}`);
    expect(reads.slice(0, 3).sort()).toEqual([`POST ${FETCH}`, `POST ${FETCH}`, `POST ${FETCH}`]);
    expect(
      engine.requests
        .slice(1, 3)
        .map((r) => (r.body as { sort: string[] }).sort)
        .sort(),
    ).toEqual([['id:asc'], ['id:desc']]);
    expect(reads.slice(3)).toHaveLength(60);
    for (const read of reads.slice(3)) {
      expect(read).toMatch(/^GET \/indexes\/quotes\/documents\/1[1-4]\?fields=id%2Ccatalogue_version$/);
    }
  });

  it('counts the unfiltered facets of each new catalogue as soon as it is served, before any facet request', async () => {
    let version = 'v1';
    const FIELD_OF: Record<string, string> = {
      author_key: 'author',
      work_key: 'work',
      category_key: 'category',
      genre_keys: 'genre',
    };
    engine = await scriptedEngine((request) => {
      if (request.url.endsWith('/search')) {
        const distribution = {
          author_key: { a: 1, b: 1 },
          work_key: { w: 2 },
          category_key: { c: 2 },
          genre_keys: { g: 2 },
          language: { en: 2 },
        };
        return { status: 200, json: { totalHits: 2, hits: [], facetDistribution: distribution } };
      }
      const body = request.body as { filter?: string; limit: number };
      if (body.filter === undefined)
        return { status: 200, json: fetched([{ catalogue_version: version }], 2, 0, 1) };
      // The display value of a key: the key upper-cased, a genre as it is.
      const [, attribute = '', key = ''] = /^(\w+) = "(.*)"$/.exec(body.filter) ?? [];
      const field = FIELD_OF[attribute] as string;
      const value = field === 'genre' ? [key] : key.toUpperCase();
      return { status: 200, json: fetched([{ [field]: value, catalogue_version: version }], 1, 0, 1) };
    });
    const index = openMeiliCatalogue({
      host: engine.host,
      apiKey: 'k',
      index: 'quotes',
      timeoutMs: 2_000,
      warmFacets: true,
    });
    const searches = () => engine?.requests.filter((r) => r.url.endsWith('/search')).length;
    const settled = async () => {
      for (let before = -1; before !== engine?.requests.length; ) {
        before = engine?.requests.length ?? 0;
        await new Promise((done) => setTimeout(done, 100));
      }
    };
    await index.info();
    await settled();
    expect(searches()).toBe(1);
    const before = engine.requests.length;
    expect(await index.facets({ filters: {}, facets: ['author', 'genre'], limit: 2 })).toEqual({
      total: 2,
      facets: {
        author: [
          { value: 'A', count: 1 },
          { value: 'B', count: 1 },
        ],
        genre: [{ value: 'g', count: 2 }],
      },
    });
    // Answered from what was counted when the catalogue was first served.
    expect(engine.requests.length).toBe(before);
    // A new catalogue is counted again as soon as it is seen, never answered from the old counts.
    version = 'v2';
    await new Promise((done) => setTimeout(done, INFO_TTL_MS + 50));
    await index.info();
    await settled();
    expect(searches()).toBe(2);
  });

  it('draws an unfiltered random quote at an offset when the ids have gaps', async () => {
    engine = await catalogueOfIds([2, 5, 9]);
    const index = open(engine.host);
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) seen.add((await index.random({}, ['id']))?.id as number);
    expect([...seen].sort()).toEqual([2, 5, 9]);
    expect(engine.requests.filter((r) => r.method === 'GET')).toEqual([]);
  });

  it('returns null from random when nothing matches, after one count', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: fetched([], 0, 0, 0) }));
    expect(await open(engine.host).random(normaliseFilters({ author: ['nobody'] }), null)).toBeNull();
    expect(engine.requests).toHaveLength(1);
  });

  it('reuses a count for a second: a second deep page or random draw of the same filter reads only its answer', async () => {
    engine = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      return {
        status: 200,
        json: fetched(body.limit === 0 ? [] : [{ id: 1 }], 10_000, body.offset, body.limit),
      };
    });
    const index = open(engine.host);
    const filters = normaliseFilters({ genre: ['gothic'] });
    const deep: ListQuery = { ...QUERY, filters, page: 1_000, limit: 2, fields: ['id'] };
    await index.list(deep);
    await index.list({ ...deep, page: 1_001 });
    await index.random(filters, ['id']);
    const kinds = () =>
      engine?.requests.map((r) => ((r.body as { limit: number }).limit === 0 ? 'count' : 'read'));
    expect(kinds()).toEqual(['count', 'read', 'read', 'read']);
    // Past its second, the count is read again.
    await new Promise((done) => setTimeout(done, COUNT_TTL_MS + 50));
    await index.random(filters, ['id']);
    expect(kinds()).toEqual(['count', 'read', 'read', 'read', 'count', 'read']);
  });

  it('confirms a remembered count with a fresh one before answering past the end or nothing', async () => {
    let total = 10_000;
    engine = await scriptedEngine((request) => {
      const body = request.body as { limit: number; offset: number };
      return {
        status: 200,
        json: fetched(body.limit === 0 ? [] : [{ id: 1 }], total, body.offset, body.limit),
      };
    });
    const index = open(engine.host);
    await index.list({ ...QUERY, page: 1_000, limit: 2, fields: ['id'] });
    // The catalogue grows within the second: the page past the old end exists in the new one.
    total = 30_000;
    const page = await index.list({ ...QUERY, page: 10_000, limit: 2, fields: ['id'] });
    expect(page).toEqual({ items: [{ id: 1 }], total: 30_000 });
    const bodies = engine.requests.map((r) => r.body as { limit: number; offset: number });
    expect(bodies.map((b) => b.limit === 0)).toEqual([true, false, true, false]);
    // And a filter remembered with no match is counted again before random answers nothing.
    const none = normaliseFilters({ author: ['nobody'] });
    total = 0;
    expect(await index.random(none, null)).toBeNull();
    total = 3;
    expect(await index.random(none, ['id'])).toEqual({ id: 1 });
  });

  it('reads the size and version in one request and answers from memory for a second', async () => {
    engine = await scriptedEngine(() => ({
      status: 200,
      json: fetched([{ catalogue_version: 'lx1-abc' }], 42, 0, 1),
    }));
    const index = open(engine.host);
    const [a, b] = await Promise.all([index.info(), index.info()]);
    expect(a).toEqual({ version: 'lx1-abc', count: 42 });
    expect(await index.info()).toEqual(b);
    expect(engine.requests.map((r) => r.body)).toEqual([infoRequest()]);
  });

  it('gives an empty index one version, and refuses an index the indexer did not build', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: fetched([], 0, 0, 1) }));
    expect(await open(engine.host).info()).toEqual({ version: 'empty', count: 0 });
    await engine.close();
    engine = await scriptedEngine(() => ({ status: 200, json: fetched([{ id: 1 }], 3, 0, 1) }));
    await expect(open(engine.host).info()).rejects.toThrow(CatalogueUnavailableError);
  });

  it('names the failure of its last read until a read succeeds, and reads info afresh meanwhile', async () => {
    let hang = false;
    engine = await scriptedEngine(() =>
      hang ? undefined : { status: 200, json: fetched([{ catalogue_version: 'v1' }], 3, 0, 1) },
    );
    const index = open(engine.host, 300);
    expect(await index.info()).toEqual({ version: 'v1', count: 3 });
    expect(index.recentFailure?.()).toBeUndefined();
    hang = true;
    await expect(index.list(QUERY)).rejects.toBeInstanceOf(CatalogueUnavailableError);
    expect(index.recentFailure?.()?.message).toMatch(/did not answer within 300 ms/);
    // The answer in memory (still fresh) is not served while the engine is failing.
    await expect(index.info()).rejects.toBeInstanceOf(CatalogueUnavailableError);
    hang = false;
    expect(await index.info()).toEqual({ version: 'v1', count: 3 });
    expect(index.recentFailure?.()).toBeUndefined();
  });

  const unavailable: [string, Reply, RegExp][] = [
    [
      'no index yet',
      apiError(404, 'index_not_found', 'Index `quotes` not found.'),
      /^Meilisearch holds no index 'quotes' yet: run the indexer$/,
    ],
    [
      'a refused key',
      apiError(403, 'invalid_api_key', 'The provided API key is invalid.'),
      /^Meilisearch refused the API key \(invalid_api_key\)/,
    ],
    ['an engine error', apiError(500, 'internal', 'oops'), /^Meilisearch answered HTTP 500$/],
    [
      'a proxy page that is not JSON',
      { status: 502, text: '<html>Bad Gateway</html>' },
      /body that is not JSON/,
    ],
  ];
  for (const [name, reply, message] of unavailable) {
    it(`reads ${name} as CatalogueUnavailableError, and does not cache it`, async () => {
      engine = await scriptedEngine(() => reply);
      const index = open(engine.host);
      await expect(index.info()).rejects.toThrow(message);
      await expect(index.info()).rejects.toBeInstanceOf(CatalogueUnavailableError);
      expect(engine.requests).toHaveLength(2);
    });
  }

  it('reads an engine shedding load as unavailable for a second', async () => {
    engine = await scriptedEngine(() =>
      apiError(503, 'too_many_search_requests', 'Too many search requests running at the same time: 1000.'),
    );
    const error = await open(engine.host)
      .list(QUERY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogueUnavailableError);
    expect((error as CatalogueUnavailableError).retryAfterSeconds).toBe(ENGINE_BUSY_RETRY_AFTER_S);
  });

  it('answers 503 with Retry-After over HTTP while the engine sheds load', async () => {
    engine = await scriptedEngine(() =>
      apiError(503, 'too_many_search_requests', 'Too many search requests running at the same time: 1000.'),
    );
    const app = await buildApp(
      loadConfig({ SEARCH_BACKEND: 'meilisearch', MEILI_HOST: engine.host, LOG_LEVEL: 'silent' }),
    );
    try {
      for (const url of ['/quotes', '/quotes/random', '/quotes/3']) {
        const response = await app.inject({ method: 'GET', url, headers: { 'x-bypass-auth': 'true' } });
        expect(response.statusCode, url).toBe(503);
        expect(response.headers['retry-after'], url).toBe(String(ENGINE_BUSY_RETRY_AFTER_S));
        expect(response.json(), url).toEqual({
          code: 503,
          error: 'service_unavailable',
          details: `The quote catalogue is busy; try again in ${ENGINE_BUSY_RETRY_AFTER_S} s`,
        });
      }
    } finally {
      await app.close();
    }
  });

  it('stays ready while the engine sheds searches: it answers, and holds the index', async () => {
    // A search queue that is full refuses searches only; documents are still read. A real engine
    // refuses them only while its queue is full, which no test can hold steady.
    engine = await scriptedEngine((request) => {
      if (request.url.endsWith('/search') || request.url === '/multi-search') {
        return apiError(
          503,
          'too_many_search_requests',
          'Too many search requests running at the same time: 1000.',
        );
      }
      return { status: 200, json: fetched([{ catalogue_version: 'v1' }], 3, 0, 1) };
    });
    const app = await buildApp(
      loadConfig({ SEARCH_BACKEND: 'meilisearch', MEILI_HOST: engine.host, LOG_LEVEL: 'silent' }),
    );
    const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-bypass-auth': 'true' } });
    try {
      expect((await get('/ready')).statusCode).toBe(200);
      const shed = await get('/quotes?q=truth+universally&fields=id');
      expect(shed.statusCode).toBe(503);
      expect(shed.headers['retry-after']).toBe(String(ENGINE_BUSY_RETRY_AFTER_S));
      const ready = await get('/ready');
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready' });
    } finally {
      await app.close();
    }
  });

  it('turns /ready to 503 within 250 ms of a quote request that found the engine hung, and back once it answers', async () => {
    let hung = false;
    engine = await scriptedEngine((request) => {
      if (hung) return undefined;
      if ((request.body as { fields?: string[] } | undefined)?.fields?.[0] === 'catalogue_version') {
        return { status: 200, json: fetched([{ catalogue_version: 'v1' }], 3, 0, 1) };
      }
      return { status: 200, json: fetched([{ id: 1 }], 3, 0, 5) };
    });
    const app = await buildApp(
      loadConfig({
        SEARCH_BACKEND: 'meilisearch',
        MEILI_HOST: engine.host,
        MEILI_TIMEOUT_MS: '400',
        LOG_LEVEL: 'silent',
      }),
    );
    const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-bypass-auth': 'true' } });
    try {
      expect((await get('/ready')).statusCode).toBe(200);
      expect((await get('/quotes?fields=id')).statusCode).toBe(200);
      hung = true;
      // Its catalogue version is still in memory: only the page read finds the engine hung.
      expect((await get('/quotes?fields=id&page=2')).statusCode).toBe(503);
      const started = performance.now();
      expect((await get('/ready')).statusCode).toBe(503);
      expect(performance.now() - started).toBeLessThan(250);
      hung = false;
      const deadline = Date.now() + 2_000;
      let ready = await get('/ready');
      while (ready.statusCode !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        ready = await get('/ready');
      }
      expect(ready.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('serves a page it has read at once, without reading the catalogue version again from an engine that has stopped answering', async () => {
    // The page takes longer than the version is kept in memory; every later read hangs.
    let versionReads = 0;
    engine = await scriptedEngine((request) => {
      if ((request.body as { fields?: string[] } | undefined)?.fields?.[0] === 'catalogue_version') {
        versionReads++;
        return versionReads === 1
          ? { status: 200, json: fetched([{ catalogue_version: 'v1' }], 3, 0, 1) }
          : undefined;
      }
      if (request.url === FETCH) {
        return { status: 200, json: fetched([{ id: 1 }], 3, 0, 1), delayMs: INFO_TTL_MS + 200 };
      }
      return undefined;
    });
    const app = await buildApp(
      loadConfig({
        SEARCH_BACKEND: 'meilisearch',
        MEILI_HOST: engine.host,
        MEILI_TIMEOUT_MS: '2000',
        LOG_LEVEL: 'silent',
      }),
    );
    try {
      const started = performance.now();
      const response = await app.inject({
        method: 'GET',
        url: '/quotes?limit=1&fields=id',
        headers: { 'x-bypass-auth': 'true' },
      });
      const ms = performance.now() - started;
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(
        '{"items":[{"id":1}],"pagination":{"page":1,"limit":1,"total_pages":3,"total_quotes":3}}',
      );
      // The page's own read, not a second wait of up to MEILI_TIMEOUT_MS after it.
      expect(ms).toBeLessThan(INFO_TTL_MS + 200 + 700);
    } finally {
      await app.close();
    }
  });

  it('answers a client that half-closes its connection after its request, while the engine is still reading', async () => {
    engine = await scriptedEngine((request) =>
      (request.body as { fields?: string[] } | undefined)?.fields?.[0] === 'catalogue_version'
        ? { status: 200, json: fetched([{ catalogue_version: 'v1' }], 3, 0, 1) }
        : { status: 200, json: fetched([{ id: 1 }], 3, 0, 1) },
    );
    const app = await buildApp(
      loadConfig({ SEARCH_BACKEND: 'meilisearch', MEILI_HOST: engine.host, LOG_LEVEL: 'silent' }),
    );
    try {
      const origin = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
      // `rawHttp` ends its side as soon as the request is written.
      const answer = await rawHttp(
        Number(origin.port),
        'GET /quotes?limit=1&fields=id HTTP/1.1\r\nHost: test\r\nX-Bypass-Auth: true\r\nContent-Length: 2\r\n\r\n{}',
      );
      expect(answer.slice(0, 15)).toBe('HTTP/1.1 200 OK');
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(
        '{"items":[{"id":1}],"pagination":{"page":1,"limit":1,"total_pages":3,"total_quotes":3}}',
      );
    } finally {
      await app.close();
    }
  });

  it('rethrows a request the engine rejects as invalid: that is a bug, not an outage', async () => {
    engine = await scriptedEngine(() =>
      apiError(400, 'invalid_document_filter', 'Attribute `x` is not filterable.'),
    );
    const error = await open(engine.host)
      .list(QUERY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MeilisearchApiError);
    expect(error).not.toBeInstanceOf(CatalogueUnavailableError);
  });

  it('answers 503 naming the indexer when the index predates language (not filterable there)', async () => {
    engine = await scriptedEngine(() =>
      apiError(
        400,
        'invalid_document_filter',
        'Attribute `language` is not filterable. Available filterable attributes are: `id`.',
      ),
    );
    const error = await open(engine.host)
      .list({ ...QUERY, filters: { language: ['fr'] } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogueUnavailableError);
    expect((error as Error).message).toMatch(/run the indexer to rebuild it/);
  });

  it.each([
    [
      'an authors index',
      'quotes_authors',
      'invalid_document_sort',
      'Attribute `name_sort_2` is not sortable.',
    ],
    ['a works index', 'quotes_works', 'invalid_document_sort', 'Attribute `title_sort_3` is not sortable.'],
    ['a works index', 'quotes_works', 'invalid_document_filter', 'Attribute `author_id` is not filterable.'],
    ['the quotes index', 'quotes', 'invalid_document_sort', 'Attribute `author_sort_2` is not sortable.'],
  ])(
    'reads a refusal of an attribute the indexer declares on %s as an index to rebuild (%s, %s)',
    (_, index, code, message) => {
      const refusal = new MeilisearchApiError(new Response(null, { status: 400 }), {
        message,
        code,
        type: 'invalid_request',
        link: '',
      });
      const error = toPortError(refusal, { host: 'http://engine', index, timeoutMs: 1000 });
      expect(error).toBeInstanceOf(CatalogueUnavailableError);
      expect((error as Error).message).toMatch(/run the indexer to rebuild it/);
    },
  );

  it('reads a document without a language as a quote without one, as its record gave it', async () => {
    engine = await scriptedEngine(() => ({
      status: 200,
      json: fetched([{ id: 1, catalogue_version: 'v1' }], 1, 0, 1),
    }));
    const page = await open(engine.host).list({ ...QUERY, fields: ['id', 'language'] });
    expect(page.items).toEqual([{ id: 1 }]);
  });

  it('answers 503 naming the indexer when a document lacks a field every quote has', async () => {
    engine = await scriptedEngine(() => ({
      status: 200,
      json: fetched([{ id: 1, catalogue_version: 'v1' }], 1, 0, 1),
    }));
    const error = await open(engine.host)
      .list({ ...QUERY, fields: ['id', 'author'] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogueUnavailableError);
    expect((error as Error).message).toMatch(/has no 'author': run the indexer/);
  });

  it('answers 503 for authors and works when the catalogue was built before them (no such index)', async () => {
    engine = await scriptedEngine(() =>
      apiError(404, 'index_not_found', 'Index `quotes_authors` not found.'),
    );
    const directory = open(engine.host).directory?.();
    const calls: (() => Promise<unknown> | undefined)[] = [
      () => directory?.author(1),
      () => directory?.works({ filters: {}, sort: 'name', direction: 'asc', page: 1, limit: 5 }),
    ];
    for (const call of calls) {
      const error = await Promise.resolve()
        .then(call)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CatalogueUnavailableError);
      expect((error as Error).message).toMatch(/run the indexer/);
    }
  });

  it('serves as soon as an engine appears on an address that refused connections', async () => {
    const port = await refusedPort();
    const index = openMeiliCatalogue({
      host: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      index: 'quotes',
      timeoutMs: 2_000,
    });
    await expect(index.info()).rejects.toBeInstanceOf(CatalogueUnavailableError);
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(fetched([{ catalogue_version: 'v1' }], 1, 0, 1)));
    });
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    try {
      expect(await index.info()).toEqual({ version: 'v1', count: 1 });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    }
  });
});
