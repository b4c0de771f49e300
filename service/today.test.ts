/**
 * `GET /quotes/today` on SQLite and on a real Meilisearch: one quote per UTC day and filter set,
 * the same from two replicas and from both engines, changing at midnight UTC, with an ETag and
 * `Cache-Control: public, max-age=<seconds until midnight>`. The clock is the app's injected one,
 * so midnight is crossed without waiting.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Quote } from './catalogue/port.ts';
import {
  bundledQuotes,
  type EngineBackend,
  engineApp,
  generatedQuotes,
  meiliBackend,
  sqliteBackend,
} from './test-support/engine-apps.ts';
import { announceSkip, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'quote of the day';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

const BYPASS = { 'x-bypass-auth': 'true' };
const DAY = 86_400_000;
const NOON = Date.UTC(2026, 2, 1, 12);
/**
 * The generated quotes again, their ids spread evenly from 1 to 2^53 - 1 (the largest id the
 * contract's integers allow): a span of ids far wider than any catalogue's count.
 */
function spreadIds(quotes: Quote[]): Quote[] {
  const step = Math.floor((Number.MAX_SAFE_INTEGER - 1) / (quotes.length - 1));
  return quotes.map((q, i) => ({
    ...q,
    id: i === quotes.length - 1 ? Number.MAX_SAFE_INTEGER : 1 + i * step,
  }));
}
const CATALOGUES = {
  bundled: bundledQuotes(),
  generated: generatedQuotes(1_500, 9),
  spread: spreadIds(generatedQuotes(1_500, 9)),
};
type Name = keyof typeof CATALOGUES;
/** Filter sets and the oracle of each, written plainly. */
const FILTERS: [string, (q: Quote) => boolean][] = [
  ['', () => true],
  ['category=poetry', (q) => q.category.toLowerCase() === 'poetry'],
  ['min_length=60&max_length=140', (q) => q.quote_length >= 60 && q.quote_length <= 140],
  [
    'published_from=1800&published_to=1899-12-31',
    (q) => q.publish_date.slice(0, 4) >= '1800' && q.publish_date.slice(0, 4) <= '1899',
  ],
  ['category=fiction&min_length=100', (q) => q.category.toLowerCase() === 'fiction' && q.quote_length >= 100],
];

interface Served {
  /** Two replicas reading the same catalogue, sharing the test's clock. */
  replicas: [FastifyInstance, FastifyInstance];
}

function serveAll(backend: EngineBackend, clock: { now: number }) {
  const served = {} as Record<Name, Served>;
  const removals: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    await backend.start();
    for (const name of Object.keys(CATALOGUES) as Name[]) {
      const catalogue = await backend.serve(CATALOGUES[name]);
      removals.push(catalogue.remove);
      const deps = { now: () => clock.now };
      served[name] = {
        replicas: [await engineApp(catalogue.env, deps), await engineApp(catalogue.env, deps)],
      };
    }
  }, 180_000);
  afterAll(async () => {
    for (const s of Object.values(served)) for (const app of s.replicas) await app.close();
    for (const remove of removals) await remove();
    await backend.stop();
  });
  return served;
}

const today = (app: FastifyInstance, params = '', headers: Record<string, string> = {}) =>
  app.inject({
    method: 'GET',
    url: `/quotes/today${params === '' ? '' : `?${params}`}`,
    headers: { ...BYPASS, ...headers },
  });

for (const backend of [sqliteBackend(), meiliBackend(source, SUITE)]) {
  const title = `quote of the day on ${backend.name}`;
  if (backend.skip !== undefined) {
    describe.skip(`${title} (skipped: ${backend.skip})`, () => {
      it('needs the engine', () => {});
    });
    continue;
  }
  describe(title, () => {
    const clock = { now: NOON };
    const served = serveAll(backend, clock);

    it('gives one matching quote per day, the same from every replica at any hour of the day', async () => {
      for (const name of Object.keys(CATALOGUES) as Name[]) {
        const [a, b] = served[name].replicas;
        for (const [params, matches] of FILTERS) {
          const seen = new Set<number>();
          for (let d = 0; d < 8; d++) {
            const ids: number[] = [];
            for (const at of [0, 1, 12 * 3_600_000, DAY - 1]) {
              clock.now = Date.UTC(2026, 2, 1 + d) + at;
              for (const app of [a, b]) {
                const response = await today(app, params);
                expect(response.statusCode, response.body).toBe(200);
                const quote = response.json() as Quote;
                expect(matches(CATALOGUES[name].find((q) => q.id === quote.id) as Quote), params).toBe(true);
                expect(quote).toEqual(CATALOGUES[name].find((q) => q.id === quote.id));
                ids.push(quote.id);
              }
            }
            expect(new Set(ids).size, `${name} ${params} day ${d}`).toBe(1);
            seen.add(ids[0] as number);
          }
          // Eight days of a catalogue of hundreds: the quote does change from day to day.
          expect(seen.size, `${name} ${params}`).toBeGreaterThan(1);
        }
      }
    });

    it('changes at midnight UTC, with max-age counting down to it', async () => {
      const [app] = served.generated.replicas;
      const midnight = Date.UTC(2026, 5, 30 + 1);
      const ids: number[] = [];
      for (const [at, maxAge] of [
        [midnight - DAY, 86_400],
        [midnight - DAY + 1, 86_400],
        [midnight - 12 * 3_600_000, 43_200],
        [midnight - 1_500, 2],
        [midnight - 1, 1],
        [midnight, 86_400],
        [midnight + 999, 86_400],
        [midnight + 1_000, 86_399],
      ] as const) {
        clock.now = at;
        const response = await today(app);
        expect(response.headers['cache-control'], new Date(at).toISOString()).toBe(
          `public, max-age=${maxAge}`,
        );
        ids.push((response.json() as Quote).id);
      }
      expect(new Set(ids.slice(0, 5)).size).toBe(1);
      expect(new Set(ids.slice(5)).size).toBe(1);
      expect(ids[4]).not.toBe(ids[5]);
    });

    it('carries an ETag that changes with the day, the filters and the fields, and answers 304 to it', async () => {
      const [app, other] = served.bundled.replicas;
      clock.now = NOON;
      const first = await today(app, 'category=poetry');
      const etag = String(first.headers.etag);
      expect(etag).toMatch(/^W\/".+"$/);
      expect((await today(other, 'category=POETRY')).headers.etag).toBe(etag);
      const revalidated = await today(app, 'category=poetry', { 'if-none-match': etag });
      expect(revalidated.statusCode).toBe(304);
      expect(revalidated.body).toBe('');
      expect(revalidated.headers['cache-control']).toBe('public, max-age=43200');
      // Public, so a shared cache may store it: only for requests that carry the same access headers.
      expect(first.headers.vary).toBe('Authorization, X-Bypass-Auth');
      expect(revalidated.headers.vary).toBe('Authorization, X-Bypass-Auth');
      const head = await app.inject({
        method: 'HEAD',
        url: '/quotes/today?category=poetry',
        headers: { ...BYPASS, 'if-none-match': etag },
      });
      expect(head.statusCode).toBe(304);
      expect((await today(app, 'category=poetry&fields=id')).headers.etag).not.toBe(etag);
      expect((await today(app, 'category=fiction')).headers.etag).not.toBe(etag);
      clock.now = NOON + DAY;
      const tomorrow = await today(app, 'category=poetry', { 'if-none-match': etag });
      expect(tomorrow.statusCode).toBe(200);
      expect(tomorrow.headers.etag).not.toBe(etag);
    });

    it('takes fields, answers 404 when nothing matches and 400 for a bad parameter', async () => {
      const [app] = served.bundled.replicas;
      clock.now = NOON;
      const projected = await today(app, 'fields=author,quote');
      expect(Object.keys(projected.json() as object)).toEqual(['author', 'quote']);
      const none = await today(app, 'author=nobody+at+all');
      expect(none.statusCode).toBe(404);
      expect((none.json() as { error: string }).error).toBe('not_found');
      for (const [params, name] of [
        ['count=2', 'count'],
        ['page=2', 'page'],
        ['sort=id', 'sort'],
        ['min_length=x', 'min_length'],
        ['published_from=1900&published_to=1800', 'published_from'],
        ['fields=nope', 'fields'],
      ]) {
        const response = await today(app, params);
        expect(response.statusCode, params).toBe(400);
        expect((response.json() as { details: string }).details, params).toMatch(new RegExp(`^${name} `));
      }
      const anonymous = await app.inject({ method: 'GET', url: '/quotes/today' });
      expect(anonymous.statusCode).toBe(401);
    });
  });
}

describe.skipIf('skip' in source)('quote of the day: the same on both engines', () => {
  const clock = { now: NOON };
  const sqlite = serveAll(sqliteBackend(), clock);
  const meili = serveAll(meiliBackend(source, SUITE), clock);

  it('for every catalogue, filter set and day', async () => {
    let compared = 0;
    for (const name of Object.keys(CATALOGUES) as Name[]) {
      for (const [params] of FILTERS) {
        for (let d = 0; d < 15; d++) {
          clock.now = NOON + d * DAY;
          const a = await today(sqlite[name].replicas[0], params);
          const b = await today(meili[name].replicas[0], params);
          expect(a.statusCode).toBe(200);
          expect(b.body, `${name} ${params} day ${d}`).toBe(a.body);
          compared++;
        }
      }
    }
    expect(compared).toBe(225);
  });

  it('for sparse matches too, whether a day finds one among its first candidates or by its offset', async () => {
    // The 2 to 4 longest quotes of 1,500: a span of 1,500 ids and 128 candidates a day, so
    // some days find one among their candidates and the others fall back to the day's offset.
    const lengths = CATALOGUES.generated.map((q) => q.quote_length).sort((x, y) => y - x);
    const found = new Set<number>();
    for (const rank of [1, 2, 3]) {
      const min = lengths[rank] as number;
      for (let d = 0; d < 15; d++) {
        clock.now = NOON + d * DAY;
        const a = await today(sqlite.generated.replicas[0], `min_length=${min}`);
        const b = await today(meili.generated.replicas[0], `min_length=${min}`);
        expect(a.statusCode).toBe(200);
        expect((a.json() as Quote).quote_length).toBeGreaterThanOrEqual(min);
        expect(b.body, `min_length=${min} day ${d}`).toBe(a.body);
        found.add((a.json() as Quote).id);
      }
    }
    expect(found.size).toBeGreaterThan(1);
  });
});
