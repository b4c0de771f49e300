import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwarder, forwarderPaths } from './forwarder.ts';

describe('forwarder', () => {
  /** What the upstream received, and an answer whose bytes tell it apart from a re-serialised one. */
  const received: { method?: string; url?: string; body: string; auth?: string }[] = [];
  const upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, body, auth: req.headers.authorization });
      if (req.url?.includes('missing')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          '{"message":"Document not found","code":"document_not_found","type":"invalid_request","link":""}',
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"results":[{"id":7,"quote":"“Ça”"}],  "n":${received.length}}`);
    });
  });
  let host = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    host = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    upstream.closeAllConnections();
    upstream.close();
  });

  it('forwards each recorded request with the key and passes the answer back byte for byte', async () => {
    const app = forwarder(
      [
        { method: 'POST', path: '/indexes/quotes/documents/fetch', body: '{"limit":2,"offset":40}' },
        { method: 'GET', path: '/indexes/quotes/documents/7?fields=id%2Cquote' },
      ],
      host,
      'search-key',
    );
    try {
      expect(forwarderPaths(2)).toEqual(['/r/0', '/r/1']);
      const posted = await app.inject({ method: 'GET', url: '/r/0' });
      expect(posted.statusCode).toBe(200);
      expect(posted.rawPayload.toString('utf8')).toBe('{"results":[{"id":7,"quote":"“Ça”"}],  "n":1}');
      const got = await app.inject({ method: 'GET', url: '/r/1' });
      expect(got.statusCode).toBe(200);
      expect(received.slice(-2)).toEqual([
        {
          method: 'POST',
          url: '/indexes/quotes/documents/fetch',
          body: '{"limit":2,"offset":40}',
          auth: 'Bearer search-key',
        },
        {
          method: 'GET',
          url: '/indexes/quotes/documents/7?fields=id%2Cquote',
          body: '',
          auth: 'Bearer search-key',
        },
      ]);
    } finally {
      await app.close();
    }
  });

  it('answers 502 when the engine refuses a request, and 404 for a request it does not hold', async () => {
    const app = forwarder([{ method: 'GET', path: '/indexes/quotes/documents/missing' }], host, 'k');
    try {
      const refused = await app.inject({ method: 'GET', url: '/r/0' });
      expect(refused.statusCode).toBe(502);
      expect(refused.json()).toEqual({ error: 'Document not found' });
      expect((await app.inject({ method: 'GET', url: '/r/1' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });

  it('refuses a recorded request of a method the engine client does not send', () => {
    expect(() => forwarder([{ method: 'DELETE', path: '/indexes/quotes' }], host, 'k')).toThrow(
      'the forwarder sends GET and POST requests, not DELETE /indexes/quotes',
    );
  });
});
