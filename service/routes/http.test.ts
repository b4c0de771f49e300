/**
 * What every path shares: HEAD, 405, 404, Fastify's own errors in the contract's shape, ETag and
 * 304 (docs/api.md#caching), /health and /ready, 5xx without internals, the OpenAPI document.
 */
import { readFileSync } from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIndex, CatalogueUnavailableError } from '../catalogue/port.ts';
import { openSqliteCatalogue } from '../catalogue/sqlite/catalogue.ts';
import { INTERNAL_DETAILS } from '../errors.ts';
import { etagFor } from '../etag.ts';
import { listKey, parseListQuery, parseV1Query, readQuery } from '../query.ts';
import {
  BYPASS,
  buildFixtureCatalogue,
  errorOf,
  type FixtureCatalogue,
  fixtureApp,
  get,
  rawHttp,
} from '../test-app.ts';

let catalogue: FixtureCatalogue;
let app: FastifyInstance;

beforeAll(async () => {
  catalogue = await buildFixtureCatalogue();
  app = await fixtureApp(catalogue.path);
});
afterAll(async () => {
  await app?.close();
  catalogue?.remove();
});

const CONTRACT_PATHS = ['/quotes', '/quotes/random', '/quotes/7', '/api/v1/quotes', '/health', '/ready'];

describe('methods and paths', () => {
  it('answers HEAD wherever GET answers, with the same headers and no body', async () => {
    for (const url of [
      '/quotes',
      '/quotes/7',
      '/quotes/random?author_id=7',
      '/api/v1/quotes?genre=lyric',
      '/health',
      '/ready',
    ]) {
      const getResponse = await get(app, url);
      const head = await app.inject({ method: 'HEAD', url, headers: BYPASS });
      expect(head.statusCode, url).toBe(200);
      expect(head.body, url).toBe('');
      expect(head.headers['content-type'], url).toBe('application/json; charset=utf-8');
      expect(head.headers.etag, url).toBe(getResponse.headers.etag);
      if (!url.startsWith('/quotes/random')) {
        expect(head.headers['content-length'], url).toBe(getResponse.headers['content-length']);
      }
    }
    const missing = await app.inject({ method: 'HEAD', url: '/quotes/4', headers: BYPASS });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe('');
  });

  it('answers 405 with Allow: GET, HEAD to any other method on a known path, before reading a body', async () => {
    for (const url of CONTRACT_PATHS) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'] as const) {
        const response = await app.inject({
          method,
          url,
          headers: { 'content-type': 'application/json' },
          payload: method === 'POST' ? '{not json' : undefined,
        });
        expect(response.statusCode, `${method} ${url}`).toBe(405);
        expect(response.headers.allow).toBe('GET, HEAD');
        const path = url;
        expect(errorOf(response)).toEqual({
          code: 405,
          error: 'method_not_allowed',
          details: `${method} is not allowed on ${path}; use GET, HEAD`,
        });
      }
    }
    const big = await app.inject({ method: 'POST', url: '/quotes', payload: 'x'.repeat(100_000) });
    expect(big.statusCode).toBe(405);
  });

  it('answers 404 not_found for unknown paths, for any method, without credentials', async () => {
    for (const url of [
      '/',
      '/quote',
      '/quotes/7/extra',
      '/api/v2/quotes',
      '/api/v1/quotes/7',
      '/QUOTES',
      '/quotes//',
    ]) {
      for (const method of ['GET', 'POST'] as const) {
        const response = await app.inject({ method, url, payload: method === 'POST' ? '{bad' : undefined });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        expect(errorOf(response)).toEqual({
          code: 404,
          error: 'not_found',
          details: `No resource at ${url}`,
        });
      }
    }
    const asset = await app.inject({ method: 'GET', url: '/docs/static/missing.js' });
    expect(errorOf(asset)).toEqual({
      code: 404,
      error: 'not_found',
      details: 'No resource at /docs/static/missing.js',
    });
    const long = await app.inject({ method: 'GET', url: `/${'z'.repeat(500)}` });
    expect(errorOf(long).details).toBe(`No resource at /${'z'.repeat(99)}…`);
  });

  it('ignores a body sent with GET', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/quotes?limit=1',
      headers: { ...BYPASS, 'content-type': 'application/json' },
      payload: '{"limit": 50, broken',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().items).toHaveLength(1);
    const weird = await app.inject({
      method: 'GET',
      url: '/quotes/7?fields=id',
      headers: { ...BYPASS, 'content-type': 'text/nonsense' },
      payload: 'x'.repeat(5000),
    });
    expect(weird.body).toBe('{"id":7}');
  });

  it('routes a path whose percent-encoding does not decode as its literal text, after the usual checks', async () => {
    // The router alone would answer these 400 before any hook: uncounted and unauthenticated.
    const badId = await app.inject({ method: 'GET', url: '/quotes/%E0%A4%A', headers: BYPASS });
    expect(badId.statusCode).toBe(400);
    expect(errorOf(badId).details).toBe("id must be an integer ≥ 1, got '%E0%A4%A'");
    expect(badId.headers['x-ratelimit-remaining']).toBeDefined();
    const anonymous = await app.inject({ method: 'GET', url: '/quotes/%ZZ' });
    expect(anonymous.statusCode).toBe(401);
    const post = await app.inject({ method: 'POST', url: '/quotes/%C3%28' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    const elsewhere = await app.inject({ method: 'GET', url: '/qu%ZZotes?x=1' });
    expect(elsewhere.statusCode).toBe(404);
    expect(errorOf(elsewhere).details).toBe('No resource at /qu%ZZotes');
    const badQuery = await get(app, '/quotes?author=%');
    expect(errorOf(badQuery).details).toMatch(/^author has invalid percent-encoding/);
  });

  it('answers a long id like any unknown id: a valid integer that no quote has', async () => {
    const longId = await app.inject({ method: 'GET', url: `/quotes/${'9'.repeat(150)}`, headers: BYPASS });
    expect(longId.statusCode).toBe(404);
    expect(errorOf(longId).details).toBe(`No quote has id ${'9'.repeat(40)}…`);
    expect(longId.headers['x-ratelimit-remaining']).toBeDefined();
    const longText = await app.inject({
      method: 'GET',
      url: `/quotes/${'x'.repeat(60_000)}`,
      headers: BYPASS,
    });
    expect(longText.statusCode).toBe(400);
    expect(errorOf(longText).details).toBe(`id must be an integer ≥ 1, got '${'x'.repeat(40)}…'`);
    const longDelete = await app.inject({ method: 'DELETE', url: `/quotes/${'x'.repeat(60_000)}` });
    expect(longDelete.statusCode).toBe(405);
    expect(errorOf(longDelete).details).toBe(
      `DELETE is not allowed on /quotes/${'x'.repeat(92)}…; use GET, HEAD`,
    );
  });
});

/** Runs `check` against a fixture app listening on a free port, then closes the app. */
async function listening(check: (port: number) => Promise<void>): Promise<void> {
  const server = await fixtureApp(catalogue.path);
  try {
    await server.listen({ host: '127.0.0.1', port: 0 });
    await check((server.server.address() as AddressInfo).port);
  } finally {
    await server.close();
  }
}

describe('malformed HTTP', () => {
  it('answers requests Node cannot parse with a 400 Error object, not a framework body', async () => {
    await listening(async (port) => {
      const cases: [string, string][] = [
        ['GET /quotes HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n', 'the request is not valid HTTP'],
        [
          `GET /quotes HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
          'the request line and headers are too large (at most 64 KiB)',
        ],
      ];
      for (const [request, details] of cases) {
        const response = await rawHttp(port, request);
        const [head = '', body = ''] = response.split('\r\n\r\n');
        expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
        expect(head).toContain('Content-Type: application/json; charset=utf-8');
        expect(JSON.parse(body)).toEqual({ code: 400, error: 'bad_request', details });
      }
    });
  });

  it('answers the complete requests pipelined before a malformed one, then the error, then closes', async () => {
    await listening(async (port) => {
      const good = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
      const quote = 'GET /quotes/7?fields=id HTTP/1.1\r\nHost: x\r\nX-Bypass-Auth: true\r\n\r\n';
      const notHttp = { code: 400, error: 'bad_request', details: 'the request is not valid HTTP' };
      const cases: [string, [number, unknown][]][] = [
        [
          `${good}GARBAGE\r\n\r\n`,
          [
            [200, { status: 'ok' }],
            [400, notHttp],
          ],
        ],
        [
          `${quote}BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n`,
          [
            [200, { id: 7 }],
            [404, { code: 404, error: 'not_found', details: 'No resource at /pot' }],
          ],
        ],
        [
          `${good}${quote}GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n\r\n`,
          [
            [200, { status: 'ok' }],
            [200, { id: 7 }],
            [400, notHttp],
          ],
        ],
      ];
      for (const [request, expected] of cases) {
        // rawHttp sends it in one write and reads until the server closes the connection.
        const answers = responses(await rawHttp(port, request));
        expect(
          answers.map((a) => [a.status, JSON.parse(a.body)]),
          JSON.stringify(request),
        ).toEqual(expected);
        expect(answers.at(-1)?.head.toLowerCase()).toContain('connection: close');
      }
    });
  });

  it('cuts a client whose request is still arriving after 15 s, with a 400 Error object', async () => {
    await listening(async (port) => {
      const started = performance.now();
      const answer = await new Promise<string>((resolve, reject) => {
        // One header line a second, never the end of the headers: a slowloris client.
        const socket = connect(port, '127.0.0.1', () => socket.write('GET /quotes HTTP/1.1\r\nHost: x\r\n'));
        const trickle = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 1000);
        let data = '';
        socket.on('data', (chunk) => {
          data += chunk.toString('utf8');
        });
        socket.on('error', () => {});
        socket.on('close', () => {
          clearInterval(trickle);
          resolve(data);
        });
        setTimeout(() => reject(new Error('still open after 30 s')), 30_000).unref();
      });
      const seconds = (performance.now() - started) / 1000;
      // Node checks its connections every second (HTTP_OPTIONS): the cut comes within that second.
      expect(seconds).toBeGreaterThanOrEqual(14.9);
      expect(seconds).toBeLessThan(17.5);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(body)).toEqual({
        code: 400,
        error: 'bad_request',
        details: 'the request did not arrive in time',
      });
    });
  }, 40_000);

  it('takes one filter at its contract limits in any script over real HTTP: 20 values of 200 characters', async () => {
    await listening(async (port) => {
      const value = encodeURIComponent('中'.repeat(200));
      const query = Array.from({ length: 20 }, () => `work=${value}`).join('&');
      expect(query.length).toBeGreaterThan(36_000);
      const response = await fetch(`http://127.0.0.1:${port}/quotes?${query}`, { headers: BYPASS });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: 'not_found' });
    });
  });

  it('answers in JSON where Node would answer alone: no Host, an unknown Expect, CONNECT, unknown methods', async () => {
    await listening(async (port) => {
      const split = (response: string) => {
        const [head = '', body = ''] = response.split('\r\n\r\n');
        expect(head.toLowerCase()).toContain('content-type: application/json; charset=utf-8');
        return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body: JSON.parse(body) };
      };

      // The service has one host: a request without Host is served, as over HTTP/1.0.
      const noHost = split(await rawHttp(port, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n'));
      expect([noHost.status, noHost.body]).toEqual([200, { status: 'ok' }]);
      expect(split(await rawHttp(port, 'GET /health HTTP/1.0\r\n\r\n')).body).toEqual({ status: 'ok' });

      const expectation = split(
        await rawHttp(
          port,
          'GET /quotes/7?fields=id HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nX-Bypass-Auth: true\r\nConnection: close\r\n\r\n',
        ),
      );
      expect([expectation.status, expectation.body]).toEqual([200, { id: 7 }]);

      for (const [request, status, details] of [
        [
          'CONNECT /quotes HTTP/1.1\r\nHost: x\r\n\r\n',
          405,
          'CONNECT is not allowed on /quotes; use GET, HEAD',
        ],
        ['CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n', 404, 'No resource at example.com:443'],
        [
          'BREW /quotes/7?x=1 HTTP/1.1\r\nHost: x\r\n\r\n',
          405,
          'BREW is not allowed on /quotes/7; use GET, HEAD',
        ],
        ['BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n', 404, 'No resource at /pot'],
      ] as const) {
        const answer = split(await rawHttp(port, request));
        expect(answer.status, request).toBe(status);
        expect(answer.body.details, request).toBe(details);
        if (status === 405) expect(answer.head).toContain('allow: get, head');
      }
      await rawHttp(port, 'GET /quotes HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n');
      // Answered before any routing, and counted all the same.
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics.split('\n').filter((line) => line.includes('route="unparsed"'))).toEqual([
        'quotes_http_requests_total{route="unparsed",method="CONNECT",status="405"} 1',
        'quotes_http_requests_total{route="unparsed",method="CONNECT",status="404"} 1',
        'quotes_http_requests_total{route="unparsed",method="OTHER",status="405"} 1',
        'quotes_http_requests_total{route="unparsed",method="OTHER",status="404"} 1',
        'quotes_http_requests_total{route="unparsed",method="OTHER",status="400"} 1',
      ]);
    });
  });
});

/** The HTTP/1.1 responses of a byte stream, in order; each must carry a Content-Length. */
function responses(stream: string): { status: number; head: string; body: string }[] {
  const out: { status: number; head: string; body: string }[] = [];
  let rest = Buffer.from(stream, 'utf8');
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) throw new Error(`incomplete response: ${rest.toString()}`);
    const head = rest.subarray(0, end).toString('latin1');
    const length = /\r\ncontent-length: (\d+)/i.exec(head);
    if (length === null) throw new Error(`no content-length: ${head}`);
    const bodyEnd = end + 4 + Number(length[1]);
    out.push({ status: Number(head.split(' ')[1]), head, body: rest.subarray(end + 4, bodyEnd).toString() });
    rest = rest.subarray(bodyEnd);
  }
  return out;
}

describe('X-Content-Type-Options', () => {
  it('is nosniff on every answer: served, errors, 304, docs, and those written before routing', async () => {
    await listening(async (port) => {
      const base = `http://127.0.0.1:${port}`;
      const etag = (await fetch(`${base}/quotes/7`, { headers: BYPASS })).headers.get('etag') ?? '';
      const answers: [string, Response][] = [];
      for (const [url, init] of [
        ['/quotes', { headers: BYPASS }],
        ['/quotes/7', { headers: { ...BYPASS, 'if-none-match': etag } }],
        ['/quotes?limit=0', { headers: BYPASS }],
        ['/quotes', {}],
        ['/quotes/4', { headers: BYPASS }],
        ['/quotes', { method: 'DELETE' }],
        ['/quotes', { method: 'HEAD', headers: BYPASS }],
        ['/api/v1/quotes?genre=lyric', { headers: BYPASS }],
        ['/nowhere', {}],
        ['/quotes/%ZZ', { headers: BYPASS }],
        ['/health', {}],
        ['/ready', {}],
        ['/metrics', {}],
        ['/openapi.json', {}],
        ['/docs', {}],
        ['/docs/static/index.html', {}],
      ] as [string, RequestInit][]) {
        answers.push([`${init.method ?? 'GET'} ${url}`, await fetch(`${base}${url}`, init)]);
      }
      expect(answers.map(([what, r]) => `${what} ${r.status}`)).toContain('GET /quotes/7 304');
      for (const [what, response] of answers) {
        expect(response.headers.get('x-content-type-options'), what).toBe('nosniff');
      }
      for (const request of [
        'GARBAGE\r\n\r\n',
        'BREW /quotes HTTP/1.1\r\nHost: x\r\n\r\n',
        'CONNECT /quotes HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET /health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n',
      ]) {
        const raw = await rawHttp(port, request);
        expect(raw.split('\r\n\r\n')[0]?.toLowerCase(), request).toContain('x-content-type-options: nosniff');
      }
    });
  });
});

describe('ETag and Cache-Control', () => {
  it('list, id and v1 answers carry an ETag and private, max-age=60; a matching If-None-Match gets 304', async () => {
    for (const url of ['/quotes?author=jane+austen', '/quotes/7?fields=id', '/api/v1/quotes?genre=romance']) {
      const first = await get(app, url);
      expect(first.headers['cache-control']).toBe('private, max-age=60');
      const etag = String(first.headers.etag);
      expect(etag).toMatch(/^W\/"[\w-]+"$/);
      const again = await get(app, url, { 'if-none-match': etag });
      expect(again.statusCode, url).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe('private, max-age=60');
      expect(again.headers['content-length']).toBeUndefined();
      // RFC 9110 §8.6: a 304 may carry a Content-Length only if it is the 200's. Twice: the
      // second finds the answer cached and skips the query.
      for (let i = 0; i < 2; i++) {
        const head = await app.inject({ method: 'HEAD', url, headers: { ...BYPASS, 'if-none-match': etag } });
        expect(head.statusCode).toBe(304);
        expect(head.body).toBe('');
        expect(head.headers['content-length'], url).toBe(first.headers['content-length']);
      }
    }
  });

  it('answers 404, not 304, to a tag computed for a request that matches nothing', async () => {
    // The version is public (/metrics) and the key is the canonical request: anyone can compute
    // the tag a 200 would carry. It must not turn "nothing" into "not modified".
    const reader = openSqliteCatalogue({ path: catalogue.path });
    const { version } = await reader.info();
    await reader.close();
    const quotes = (url: string) => listKey('quotes', parseListQuery(readQuery(url)));
    const v1 = (url: string) => listKey('v1', parseV1Query(readQuery(url)));
    for (const [url, key] of [
      ['/quotes/9999', JSON.stringify(['id', 9999, null])],
      ['/quotes?author=nobody+at+all', quotes('/quotes?author=nobody+at+all')],
      ['/quotes?page=999', quotes('/quotes?page=999')],
      ['/api/v1/quotes?genre=nothing+such', v1('/api/v1/quotes?genre=nothing+such')],
    ] as const) {
      const tag = etagFor(version, key);
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await app.inject({ method, url, headers: { ...BYPASS, 'if-none-match': tag } });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
      }
    }
    // The same computation gives the tag a 200 carries, which does get its 304.
    const tag = etagFor(version, JSON.stringify(['id', 7, null]));
    expect((await get(app, '/quotes/7')).headers.etag).toBe(tag);
    expect((await get(app, '/quotes/7', { 'if-none-match': tag })).statusCode).toBe(304);
  });

  it('shares one ETag between spellings of the same request, and not between different requests', async () => {
    const tag = async (query: string) => (await get(app, `/quotes?${query}`)).headers.etag;
    const base = await tag('author=Jane+Austen&fields=quote,id');
    expect(
      await tag(
        'author=JANE%20AUSTEN&author=jane+austen&fields=id,quote,id&sort=id&order=asc&page=1&limit=5',
      ),
    ).toBe(base);
    expect(await tag('author=Jane+Austen&fields=id')).not.toBe(base);
    expect(await tag('author=Jane+Austen&fields=quote,id&limit=6')).not.toBe(base);
    expect(await tag('author=Jane+Austen&fields=quote,id&order=desc')).not.toBe(base);
    const id = (await get(app, '/quotes/7')).headers.etag;
    expect((await get(app, '/quotes/5')).headers.etag).not.toBe(id);
  });

  it('answers /quotes without a query string exactly as its explicit default spelling', async () => {
    const plain = await get(app, '/quotes');
    const explicit = await get(app, '/quotes?page=1&limit=5&sort=id&order=asc');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers.etag).toBe(explicit.headers.etag);
    expect(plain.body).toBe(explicit.body);
    // Served again from the answers already serialised: the same bytes and tag.
    const again = await get(app, '/quotes');
    expect([again.headers.etag, again.body]).toEqual([plain.headers.etag, plain.body]);
    expect(again.headers['content-length']).toBe(String(Buffer.byteLength(plain.body)));
  });

  it('matches lists, strong forms and *; a non-matching tag gets the full answer', async () => {
    const url = '/quotes?genre=lyric';
    const etag = String((await get(app, url)).headers.etag);
    expect((await get(app, url, { 'if-none-match': `"nope", ${etag}` })).statusCode).toBe(304);
    expect((await get(app, url, { 'if-none-match': etag.slice(2) })).statusCode).toBe(304);
    expect((await get(app, url, { 'if-none-match': '*' })).statusCode).toBe(304);
    const other = await get(app, url, { 'if-none-match': 'W/"something-else"' });
    expect(other.statusCode).toBe(200);
    expect(other.json().items.length).toBeGreaterThan(0);
  });

  it('never turns an error into a 304, and errors are no-store without ETag', async () => {
    for (const url of ['/quotes?author=nobody', '/quotes/4', '/quotes?limit=0']) {
      const response = await get(app, url, { 'if-none-match': '*' });
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
      expect(response.headers.etag).toBeUndefined();
      expect(response.headers['cache-control']).toBe('no-store');
    }
  });

  it('random answers are no-store, without ETag, even with If-None-Match', async () => {
    const response = await get(app, '/quotes/random', { 'if-none-match': '*' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.etag).toBeUndefined();
  });
});

describe('live catalogue', () => {
  it('serves a replaced catalogue within 5 s, with new ETags, and /ready is 503 until one exists', async () => {
    const dir = await buildFixtureCatalogue();
    const path = dir.path.replace(/quotes\.db$/, 'later.db');
    const logs: { level: number; msg: string }[] = [];
    const live = await fixtureApp(
      path,
      { LOG_LEVEL: 'info' },
      { logStream: { write: (line: string) => logs.push(JSON.parse(line)) } },
    );
    try {
      for (let probe = 0; probe < 3; probe++) {
        const notReady = await live.inject({ method: 'GET', url: '/ready' });
        expect(notReady.statusCode).toBe(503);
        expect(notReady.headers['retry-after']).toBe('5');
        expect(errorOf(notReady).error).toBe('service_unavailable');
      }
      // Probes repeat every few seconds: the cause is logged once, not per probe.
      const warnings = logs.filter((line) => line.level === 40 && line.msg.startsWith('not ready'));
      expect(warnings.map((line) => line.msg)).toEqual([`not ready: no catalogue file at ${path} (ENOENT)`]);
      expect(errorOf(await get(live, '/quotes')).error).toBe('service_unavailable');
      expect((await live.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });

      const { FIXTURE_QUOTES } = await import('../test-support/fixtures.ts');
      const { createSqliteBuilder } = await import('../catalogue/sqlite/builder.ts');
      const write = async (count: number) => {
        const builder = await createSqliteBuilder({ path });
        await builder.add(FIXTURE_QUOTES.slice(0, count));
        await builder.commit();
      };
      const totalWithin5s = async (expected: number) => {
        const started = Date.now();
        for (;;) {
          const response = await get(live, '/quotes');
          if (response.statusCode === 200 && response.json().pagination.total_quotes === expected)
            return response;
          if (Date.now() - started > 5_000) throw new Error(`not served within 5 s: ${response.body}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      await write(10);
      const first = await totalWithin5s(10);
      expect((await live.inject({ method: 'GET', url: '/ready' })).json()).toEqual({ status: 'ready' });
      expect(logs.filter((line) => line.msg === 'ready again')).toHaveLength(1);
      await write(20);
      const second = await totalWithin5s(20);
      expect(second.headers.etag).not.toBe(first.headers.etag);
      // The old tag no longer matches: the client gets the new result.
      const stale = await get(live, '/quotes', { 'if-none-match': String(first.headers.etag) });
      expect(stale.statusCode).toBe(200);
    } finally {
      await live.close();
      dir.remove();
    }
  });
});

describe('server errors', () => {
  /** The real catalogue with one method replaced by a failure. */
  function failing(real: CatalogueIndex, error: Error): CatalogueIndex {
    return {
      kind: real.kind,
      info: () => real.info(),
      list: async () => {
        throw error;
      },
      get: (id, fields) => real.get(id, fields),
      random: async () => {
        throw error;
      },
      firstMatch: async () => {
        throw error;
      },
      facets: async () => {
        throw error;
      },
      randomSample: async () => {
        throw error;
      },
      close: () => real.close(),
    };
  }

  it('answers 500 with fixed details for a bug, and logs its stack', async () => {
    const real = openSqliteCatalogue({ path: catalogue.path });
    const lines: string[] = [];
    const broken = await fixtureApp(
      catalogue.path,
      { LOG_LEVEL: 'error' },
      {
        catalogue: failing(real, new TypeError('cannot read /var/lib/secret-internals')),
        logStream: { write: (line: string) => void lines.push(line) },
      },
    );
    try {
      for (const url of ['/quotes', '/quotes/random', '/api/v1/quotes?genre=x']) {
        const response = await get(broken, url);
        expect(response.statusCode).toBe(500);
        expect(errorOf(response)).toEqual({
          code: 500,
          error: 'internal_server_error',
          details: INTERNAL_DETAILS,
        });
        expect(response.body).not.toContain('secret');
      }
      expect(lines).toHaveLength(3);
      const logged = JSON.parse(lines[0] ?? '{}');
      expect(logged.err.message).toBe('cannot read /var/lib/secret-internals');
      expect(logged.err.stack).toMatch(/TypeError: cannot read/);
      // The quote by id still works: only the broken method fails.
      expect((await get(broken, '/quotes/7?fields=id')).json()).toEqual({ id: 7 });
    } finally {
      await broken.close();
      await real.close();
    }
  });

  it('answers 503 service_unavailable when the backend is unreachable', async () => {
    const real = openSqliteCatalogue({ path: catalogue.path });
    const down = await fixtureApp(
      catalogue.path,
      {},
      { catalogue: failing(real, new CatalogueUnavailableError('gone')) },
    );
    try {
      const response = await get(down, '/quotes');
      expect(response.statusCode).toBe(503);
      expect(errorOf(response)).toEqual({
        code: 503,
        error: 'service_unavailable',
        details: 'The quote catalogue is not available right now; try again in a few seconds',
      });
      // When to ask again, as the busy 503 and the 429 say it.
      expect(response.headers['retry-after']).toBe('5');
    } finally {
      await down.close();
      await real.close();
    }
  });
});

describe('/health, /ready and the docs', () => {
  it('/health and /ready answer their contract bodies', async () => {
    const health = await app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.body).toBe('{"status":"ok"}');
    expect(health.headers['content-type']).toBe('application/json; charset=utf-8');
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    expect(ready.body).toBe('{"status":"ready"}');
  });

  it('serves an OpenAPI 3.1 document describing every contract path, and a docs page', async () => {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = response.json();
    expect(doc.openapi).toBe('3.1.0');
    // One source for the version: the package's.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(doc.info.version).toBe(pkg.version);
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/quotes',
      '/authors',
      '/authors/{id}',
      '/health',
      '/quotes',
      '/quotes/facets',
      '/quotes/random',
      '/quotes/today',
      '/quotes/{id}',
      '/ready',
      '/works',
      '/works/{id}',
    ]);
    expect(doc.components.securitySchemes.basicAuth).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(doc.components.securitySchemes.bypassAuth).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Bypass-Auth',
    });
    const list = doc.paths['/quotes'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual([
      'author',
      'author_id',
      'author_like',
      'work',
      'work_id',
      'work_like',
      'category',
      'genre',
      'language',
      'q',
      'min_length',
      'max_length',
      'published_from',
      'published_to',
      'sort',
      'order',
      'page',
      'limit',
      'fields',
    ]);
    expect(Object.keys(list.responses)).toEqual([
      '200',
      '304',
      '400',
      '401',
      '403',
      '404',
      '429',
      '500',
      '503',
    ]);
    // The headers the contract puts on responses are in the document, not only in prose.
    const headersOf = (response: { headers?: Record<string, unknown> }) =>
      Object.keys(response.headers ?? {});
    expect(headersOf(list.responses['200'])).toEqual([
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'ETag',
      'Cache-Control',
    ]);
    expect(headersOf(list.responses['429'])).toContain('Retry-After');
    expect(headersOf(list.responses['401'])).toContain('WWW-Authenticate');
    expect(list.responses['200'].headers['X-RateLimit-Reset'].schema).toEqual({ type: 'integer' });
    expect(doc.paths['/quotes/random'].get.responses['404'].description).toBe(
      'No quote matches the filters (not_found)',
    );
    expect(headersOf(doc.paths['/ready'].get.responses['503'])).toEqual(['Cache-Control', 'Retry-After']);
    expect(headersOf(list.responses['503'])).toEqual(['Retry-After']);
    // The served answers carry no trace of the documentation's headers entries.
    const served = await get(app, '/quotes?limit=1');
    expect(served.statusCode).toBe(200);
    expect(Object.keys(served.json())).toEqual(['items', 'pagination']);
    expect(doc.components.schemas.Error.required).toEqual(['code', 'error', 'details']);
    const docs = await app.inject({ method: 'GET', url: '/docs' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toBe('text/html; charset=utf-8');
  });
});

describe('metrics', () => {
  it('counts every response of the app by route pattern, method and status, with its duration', async () => {
    const counted = await fixtureApp(catalogue.path);
    try {
      await get(counted, '/quotes');
      await get(counted, '/quotes');
      await get(counted, '/quotes/999999');
      await get(counted, '/quotes?limit=0');
      await get(counted, '/nowhere');
      await counted.inject({ method: 'GET', url: '/quotes' });
      const lines = (await get(counted, '/metrics')).body.split('\n');
      expect(lines.filter((line) => line.startsWith('quotes_http_requests_total{'))).toEqual([
        'quotes_http_requests_total{route="/quotes",method="GET",status="200"} 2',
        'quotes_http_requests_total{route="/quotes/:id",method="GET",status="404"} 1',
        'quotes_http_requests_total{route="/quotes",method="GET",status="400"} 1',
        'quotes_http_requests_total{route="unmatched",method="GET",status="404"} 1',
        'quotes_http_requests_total{route="/quotes",method="GET",status="401"} 1',
      ]);
      expect(lines).toContain(
        'quotes_http_request_duration_seconds_count{route="/quotes",method="GET",status="200"} 2',
      );
    } finally {
      await counted.close();
    }
  });
});
