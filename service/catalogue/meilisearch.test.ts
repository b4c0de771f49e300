/**
 * The Meilisearch read adapter.
 *
 * 1. The port's behaviour suite, unchanged, against a real engine: `MEILI_URL` (+
 *    `MEILI_MASTER_KEY`) when set, else a `getmeili/meilisearch:v1.53` container when a Docker
 *    engine is reachable, else skipped loudly. The indexer builds with the deployment's
 *    admin-scoped key and the reader searches with a search-only key, as in production.
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
import { afterEach, describe, expect, inject, it } from 'vitest';
import { INDEXER_KEY_ACTIONS } from '../../deploy/meili-keys.ts';
import { containerRuntime } from '../test-support/containers.ts';
import { openMeiliCatalogue } from './meilisearch.ts';
import { createMeiliBuilder } from './meilisearch-builder.ts';
import { buildFilter, countRequest, infoRequest, listRequest, pickRequest } from './meilisearch-request.ts';
import { type CatalogueHarness, describeCatalogueBehaviour } from './port.suite.ts';
import {
  type CatalogueIndex,
  CatalogueUnavailableError,
  type ListQuery,
  normaliseFilters,
  type Quote,
} from './port.ts';

const MEILI_IMAGE = 'getmeili/meilisearch:v1.53';

// ---------------------------------------------------------------------------------------------
// 1. Behaviour suite

interface Engine {
  host: string;
  masterKey: string;
  stop(): Promise<void>;
}

/** Where the suite finds an engine, decided at collection time so a skip is visible. */
async function engineSource(): Promise<{ start: () => Promise<Engine> } | { skip: string }> {
  const url = process.env.MEILI_URL;
  if (url !== undefined && url !== '') {
    const masterKey = process.env.MEILI_MASTER_KEY ?? process.env.MEILI_API_KEY ?? '';
    return { start: async () => ({ host: url, masterKey, stop: async () => {} }) };
  }
  const runtime = await containerRuntime(inject('containerRuntime'));
  if (!runtime.available) {
    return {
      skip: `set MEILI_URL (and MEILI_MASTER_KEY), or make a Docker engine reachable (${runtime.reason})`,
    };
  }
  return {
    start: async () => {
      const { GenericContainer, Wait } = await import('testcontainers');
      const masterKey = randomBytes(24).toString('hex');
      const container = await new GenericContainer(MEILI_IMAGE)
        .withExposedPorts(7700)
        .withEnvironment({ MEILI_MASTER_KEY: masterKey, MEILI_NO_ANALYTICS: 'true', MEILI_ENV: 'production' })
        .withWaitStrategy(Wait.forHttp('/health', 7700).forStatusCode(200))
        .start();
      return {
        host: `http://${container.getHost()}:${container.getMappedPort(7700)}`,
        masterKey,
        stop: async () => {
          await container.stop();
        },
      };
    },
  };
}

const source = await engineSource();

describeCatalogueBehaviour(
  'meilisearch',
  async (): Promise<CatalogueHarness> => {
    if ('skip' in source) throw new Error(source.skip);
    const engine = await source.start();
    const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
    // A fresh live name per run, so a shared engine (MEILI_URL) keeps its own indexes.
    const live = `quotes_suite_${randomBytes(4).toString('hex')}`;
    const indexerKey = await admin.createKey({
      name: `${live}-indexer`,
      actions: [...INDEXER_KEY_ACTIONS],
      indexes: ['*'],
      expiresAt: null,
    });
    const searchKey = await admin.createKey({
      name: `${live}-search`,
      actions: ['search'],
      indexes: [live],
      expiresAt: null,
    });
    const opened: CatalogueIndex[] = [];
    return {
      async load(quotes: Quote[]) {
        // Tiny batches: several document tasks in flight, as with a large file.
        const builder = await createMeiliBuilder({
          host: engine.host,
          apiKey: indexerKey.key,
          index: live,
          batchSize: 9,
          taskTimeoutMs: 60_000,
        });
        try {
          for (let i = 0; i < quotes.length; i += 7) await builder.add(quotes.slice(i, i + 7));
          await builder.commit();
        } catch (error) {
          await builder.abort();
          throw error;
        }
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
          expect(leftovers.map((i) => i.uid)).toEqual([live]);
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
type Reply = { status: number; json?: unknown; text?: string };

/** An HTTP server that records requests and answers them with `reply`. */
async function scriptedEngine(reply: (request: Recorded) => Reply): Promise<{
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
      res.writeHead(answer.status, {
        'content-type': answer.json === undefined ? 'text/html' : 'application/json',
      });
      res.end(answer.json === undefined ? (answer.text ?? '') : JSON.stringify(answer.json));
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

const page = (hits: object[], totalHits: number, hitsPerPage = 5) => ({
  hits,
  query: '',
  processingTimeMs: 1,
  hitsPerPage,
  page: 1,
  totalPages: Math.ceil(totalHits / Math.max(hitsPerPage, 1)),
  totalHits,
});
const apiError = (status: number, code: string, message: string): Reply => ({
  status,
  json: { message, code, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` },
});

describe('the search protocol', () => {
  let engine: Awaited<ReturnType<typeof scriptedEngine>> | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  const open = (host: string) =>
    openMeiliCatalogue({ host, apiKey: 'search-key', index: 'quotes', timeoutMs: 2_000 });

  it('sends the built list request to the live index, with the key as a bearer token', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: page([{ id: 3, author: 'A' }], 12, 2) }));
    const query: ListQuery = {
      filters: normaliseFilters({ author_like: ['bron'] }),
      sort: [{ field: 'author', direction: 'desc' }],
      page: 2,
      limit: 2,
      fields: ['id', 'author'],
    };
    const result = await open(engine.host).list(query);
    expect(result).toEqual({ items: [{ id: 3, author: 'A' }], total: 12 });
    expect(engine.requests).toEqual([
      {
        method: 'POST',
        url: '/indexes/quotes/search',
        authorization: 'Bearer search-key',
        body: listRequest(query),
      },
    ]);
  });

  it('drops every attribute the engine returns beyond the requested fields', async () => {
    engine = await scriptedEngine(() => ({
      status: 200,
      json: page([{ author: 'A', id: 3, author_key: 'a', catalogue_version: 'v' }], 1),
    }));
    const result = await open(engine.host).list({ ...QUERY, fields: ['id', 'author'] });
    expect(result.items).toEqual([{ id: 3, author: 'A' }]);
    expect(Object.keys(result.items[0] ?? {})).toEqual(['id', 'author']);
  });

  it('answers a page past any catalogue from a count, without asking for that page', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: page([], 42, 0) }));
    const result = await open(engine.host).list({ ...QUERY, page: 2_000_000, limit: 100 });
    expect(result).toEqual({ items: [], total: 42 });
    expect(engine.requests.map((r) => r.body)).toEqual([countRequest([])]);
  });

  it('gets a quote through a search on its id, and null when nothing has it', async () => {
    let hits: object[] = [{ id: 42 }];
    engine = await scriptedEngine(() => ({
      status: 200,
      json: { hits, offset: 0, limit: 1, estimatedTotalHits: 1 },
    }));
    const index = open(engine.host);
    expect(await index.get(42, ['id'])).toEqual({ id: 42 });
    hits = [];
    expect(await index.get(43, ['id'])).toBeNull();
    expect(engine.requests.map((r) => r.body)).toEqual([
      { filter: ['id = 42'], offset: 0, limit: 1, attributesToRetrieve: ['id'] },
      { filter: ['id = 43'], offset: 0, limit: 1, attributesToRetrieve: ['id'] },
    ]);
  });

  it('draws random quotes as an exact count, then the match at a uniform offset', async () => {
    engine = await scriptedEngine((request) => {
      const body = request.body as { hitsPerPage?: number; offset?: number };
      if (body.hitsPerPage === 0) return { status: 200, json: page([], 5, 0) };
      return {
        status: 200,
        json: { hits: [{ id: body.offset }], offset: body.offset, limit: 1, estimatedTotalHits: 5 },
      };
    });
    const index = open(engine.host);
    const filters = normaliseFilters({ genre: ['gothic'] });
    const offsets = new Set<number>();
    for (let i = 0; i < 60; i++) offsets.add((await index.random(filters, ['id']))?.id as number);
    // Every offset of the 5 matches is drawn (P(miss one) < 5 × 0.8^60 ≈ 1e-5), none past them.
    expect([...offsets].sort()).toEqual([0, 1, 2, 3, 4]);
    const filter = buildFilter(filters);
    expect(engine.requests[0]?.body).toEqual(countRequest(filter));
    const pick = engine.requests[1]?.body as { offset: number };
    expect(pick).toEqual(pickRequest(filter, pick.offset, ['id']));
  });

  it('draws again when the catalogue shrank between the count and the pick', async () => {
    let picks = 0;
    engine = await scriptedEngine((request) => {
      const body = request.body as { hitsPerPage?: number };
      if (body.hitsPerPage === 0) return { status: 200, json: page([], picks === 0 ? 1_000 : 1, 0) };
      picks++;
      const hits = picks === 1 ? [] : [{ id: 7 }];
      return { status: 200, json: { hits, offset: 0, limit: 1, estimatedTotalHits: 1 } };
    });
    expect(await open(engine.host).random({}, ['id'])).toEqual({ id: 7 });
    expect(engine.requests).toHaveLength(4);
  });

  it('returns null from random when nothing matches, after one count', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: page([], 0, 0) }));
    expect(await open(engine.host).random(normaliseFilters({ author: ['nobody'] }), null)).toBeNull();
    expect(engine.requests).toHaveLength(1);
  });

  it('reads the size and version in one search and answers from memory for a second', async () => {
    engine = await scriptedEngine(() => ({
      status: 200,
      json: page([{ catalogue_version: 'lx1-abc' }], 42, 1),
    }));
    const index = open(engine.host);
    const [a, b] = await Promise.all([index.info(), index.info()]);
    expect(a).toEqual({ version: 'lx1-abc', count: 42 });
    expect(await index.info()).toEqual(b);
    expect(engine.requests.map((r) => r.body)).toEqual([infoRequest()]);
  });

  it('gives an empty index one version, and refuses an index the indexer did not build', async () => {
    engine = await scriptedEngine(() => ({ status: 200, json: page([], 0, 1) }));
    expect(await open(engine.host).info()).toEqual({ version: 'empty', count: 0 });
    await engine.close();
    engine = await scriptedEngine(() => ({ status: 200, json: page([{ id: 1 }], 3, 1) }));
    await expect(open(engine.host).info()).rejects.toThrow(CatalogueUnavailableError);
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

  it('rethrows a request the engine rejects as invalid: that is a bug, not an outage', async () => {
    engine = await scriptedEngine(() =>
      apiError(400, 'invalid_search_filter', 'Attribute `x` is not filterable.'),
    );
    const error = await open(engine.host)
      .list(QUERY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MeilisearchApiError);
    expect(error).not.toBeInstanceOf(CatalogueUnavailableError);
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
      res.end(JSON.stringify(page([{ catalogue_version: 'v1' }], 1, 1)));
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
