/**
 * A real browser calls the service from another origin: a page served by a second HTTP server on
 * loopback (another port, so another origin) fetches a quote list with Basic credentials in
 * headless Chromium and writes what it got into the page; the test reads the page's DOM as
 * Chromium dumps it. With the page's origin in CORS_ORIGINS the page shows the quotes and the
 * headers it was allowed to read; without it, the browser blocks the answer.
 *
 * Needs a Chromium (CHROMIUM_BIN, else `chromium`, `chromium-browser` or `google-chrome` on
 * PATH; Debian: apt-get install -y chromium); skips, saying so, without one.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { words } from './catalogue/port.ts';
import { buildFixtureCatalogue, type FixtureCatalogue, fixtureApp } from './test-app.ts';
import { FIXTURE_QUOTES } from './test-support/fixtures.ts';
import { announceSkip, announceUsing, type Requirement } from './test-support/suites.ts';

const QUERY = 'q=kierk&sort=id&limit=2';
/** The quotes `q=kierk` finds: a word of the text, the author or the work begins with "kierk". */
const searched = () =>
  FIXTURE_QUOTES.filter((quote) =>
    [quote.quote, quote.author, quote.work].some((text) => words(text).some((w) => w.startsWith('kierk'))),
  ).sort((a, b) => a.id - b.id);

function chromiumRequirement(): Requirement & { binary?: string } {
  const candidates = process.env.CHROMIUM_BIN
    ? [process.env.CHROMIUM_BIN]
    : ['chromium', 'chromium-browser', 'google-chrome'];
  for (const binary of candidates) {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 15_000 });
    if (probe.status === 0) return { available: true, detail: probe.stdout.trim(), binary };
  }
  return {
    available: false,
    reason: `no Chromium found (${candidates.join(', ')}): install one (apt-get install -y chromium) or set CHROMIUM_BIN`,
  };
}

const chromium = chromiumRequirement();
if (chromium.available) announceUsing(import.meta.url, chromium.detail);
else announceSkip(import.meta.url, chromium.reason);

/** What the page shows: the answer it read, or why it could not read one. */
type Shown =
  | { status: number; ids: number[]; total: number; remaining: string | null; etag: string | null }
  | { failed: string };

/** The page: one cross-origin fetch with Basic credentials, its outcome written as JSON. */
function page(serviceUrl: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>quotes</title></head>
<body><pre id="shown">pending</pre>
<script>
const shown = document.getElementById('shown');
fetch(${JSON.stringify(`${serviceUrl}/quotes?${QUERY}`)}, {
  headers: { Authorization: 'Basic ' + btoa('ann:secret') },
})
  .then(async (answer) => {
    const body = await answer.json();
    shown.textContent = JSON.stringify({
      status: answer.status,
      ids: body.items.map((quote) => quote.id),
      total: body.pagination.total_quotes,
      remaining: answer.headers.get('X-RateLimit-Remaining'),
      etag: answer.headers.get('ETag'),
    });
  })
  .catch((error) => { shown.textContent = JSON.stringify({ failed: String(error) }); });
</script></body></html>`;
}

/** Loads `url` in headless Chromium and returns what its `#shown` element holds once loaded. */
async function shownBy(binary: string, url: string): Promise<Shown> {
  const profile = mkdtempSync(join(tmpdir(), 'quotes-browser-'));
  const dom = await new Promise<string>((resolve, reject) => {
    execFile(
      binary,
      [
        '--headless',
        // The page is the test's own; containers and root often cannot give Chromium its sandbox.
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        `--user-data-dir=${profile}`,
        // Virtual time waits for the page's fetch to end before the DOM is dumped.
        '--virtual-time-budget=10000',
        '--dump-dom',
        url,
      ],
      { encoding: 'utf8', timeout: 60_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  }).finally(() => rmSync(profile, { recursive: true, force: true }));
  const text = /<pre id="shown">([\s\S]*?)<\/pre>/.exec(dom)?.[1];
  if (text === undefined) throw new Error(`no #shown element in the dumped page:\n${dom}`);
  const decoded = text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
  return JSON.parse(decoded) as Shown;
}

describe.runIf(chromium.available)('a page from another origin, in headless Chromium', () => {
  let catalogue: FixtureCatalogue;
  let pages: Server;
  let pageOrigin: string;
  let serviceUrl = '';
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    catalogue = await buildFixtureCatalogue();
    pages = createServer((request, response) => {
      if (request.url !== '/') {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(serviceUrl));
    });
    await new Promise<void>((done) => pages.listen(0, '127.0.0.1', done));
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await new Promise<void>((done) => pages.close(() => done()));
    catalogue?.remove();
  });

  /** Starts the service on its own port with `env` and points the page at it. */
  async function serve(env: Record<string, string>): Promise<void> {
    const app = await fixtureApp(catalogue.path, {
      AUTH_USERS: 'ann:secret',
      AUTH_BYPASS: 'deny',
      RATE_LIMIT_MAX: '5',
      ...env,
    });
    apps.push(app);
    serviceUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  }

  it('shows the quotes when CORS_ORIGINS names the page origin; its preflight was not counted', async () => {
    await serve({ CORS_ORIGINS: `https://elsewhere.example.test,${pageOrigin}` });
    const matching = searched();
    expect(matching.length).toBeGreaterThan(0);
    expect(await shownBy(chromium.binary as string, `${pageOrigin}/`)).toEqual({
      status: 200,
      ids: matching.slice(0, 2).map((quote) => quote.id),
      total: matching.length,
      // The preflight came first and left the count alone: the GET is the first request counted.
      remaining: '4',
      etag: expect.stringMatching(/^(W\/)?"/),
    });
  });

  it('is blocked by the browser when CORS_ORIGINS is unset, though the service answers the same request', async () => {
    await serve({});
    expect(await shownBy(chromium.binary as string, `${pageOrigin}/`)).toEqual({
      failed: 'TypeError: Failed to fetch',
    });
    const direct = await fetch(`${serviceUrl}/quotes?${QUERY}`, {
      headers: { authorization: `Basic ${btoa('ann:secret')}` },
    });
    expect(direct.status).toBe(200);
    expect(direct.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is blocked when CORS_ORIGINS lists other origins only', async () => {
    await serve({ CORS_ORIGINS: 'https://elsewhere.example.test' });
    expect(await shownBy(chromium.binary as string, `${pageOrigin}/`)).toEqual({
      failed: 'TypeError: Failed to fetch',
    });
  });
});
