/**
 * `/quotes/random?count=N` over HTTP, the same requests and expectations on every engine
 * (random-sample.test.ts: SQLite; random-sample-meilisearch.test.ts: a real Meilisearch).
 *
 * Uniformity is checked with chi-square statistics whose thresholds lie so far in the tail
 * (false alarm below one in a billion runs) that a fair sampler never trips them, while a sampler
 * that favours some quotes or some orders does at once.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Quote, words } from './catalogue/port.ts';
import { type EngineBackend, engineApp, generatedQuotes } from './test-support/engine-apps.ts';

const BYPASS = { 'x-bypass-auth': 'true' };

/** Pearson's chi-square statistic of observed counts against equal expected counts. */
function chiSquare(observed: readonly number[]): number {
  const total = observed.reduce((a, b) => a + b, 0);
  const expected = total / observed.length;
  return observed.reduce((sum, o) => sum + (o - expected) ** 2 / expected, 0);
}

export function describeRandomSample(backend: EngineBackend): void {
  const title = `several random quotes on ${backend.name}`;
  if (backend.skip !== undefined) {
    describe.skip(`${title} (skipped: ${backend.skip})`, () => {
      it('needs the engine', () => {});
    });
    return;
  }
  describe(title, () => {
    // Both of the Meilisearch adapter's ways of reading run in meilisearch/sample.test.ts.
    const quotes: Quote[] = generatedQuotes(1_500, 5);
    let app: FastifyInstance;
    let remove: () => Promise<void> = async () => {};

    beforeAll(async () => {
      await backend.start();
      const served = await backend.serve(quotes);
      remove = served.remove;
      app = await engineApp(served.env);
    }, 180_000);

    afterAll(async () => {
      await app?.close();
      await remove();
      await backend.stop();
    });

    const get = (url: string) => app.inject({ method: 'GET', url, headers: BYPASS });
    const sample = async (params: string): Promise<Quote[]> => {
      const response = await get(`/quotes/random?${params}`);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      const body = response.json() as Quote[];
      expect(Array.isArray(body)).toBe(true);
      return body;
    };

    // An author with a handful of quotes: the smallest match sets the suite samples from.
    const byAuthor = new Map<number, Quote[]>();
    for (const q of quotes) byAuthor.set(q.author_id, [...(byAuthor.get(q.author_id) ?? []), q]);
    const [smallAuthor, smallSet] = [...byAuthor].find(([, qs]) => qs.length >= 4 && qs.length <= 6) as [
      number,
      Quote[],
    ];

    it('draws N distinct matching quotes, with the requested fields', async () => {
      for (const params of [
        'count=50',
        'count=50&category=fiction',
        'count=7&min_length=100&published_from=1500',
      ]) {
        const matches = quotes.filter(
          (q) =>
            (!params.includes('category') || q.category.toLowerCase() === 'fiction') &&
            (!params.includes('min_length') || (q.quote_length >= 100 && q.publish_date >= '1500')),
        );
        const n = Number(/count=(\d+)/.exec(params)?.[1]);
        for (let round = 0; round < 3; round++) {
          const drawn = await sample(params);
          expect(drawn).toHaveLength(Math.min(n, matches.length));
          expect(new Set(drawn.map((q) => q.id)).size).toBe(drawn.length);
          const byId = new Map(matches.map((q) => [q.id, q]));
          for (const q of drawn) expect(q).toEqual(byId.get(q.id));
        }
      }
      const projected = await sample('count=5&fields=id,quote_length');
      for (const q of projected) expect(Object.keys(q)).toEqual(['id', 'quote_length']);
    });

    it('gives every match, in some order, when fewer match than asked; an array even of one', async () => {
      const drawn = await sample(`count=50&author_id=${smallAuthor}`);
      expect(drawn.map((q) => q.id).sort((a, b) => a - b)).toEqual(smallSet.map((q) => q.id));
      expect(await sample(`count=1&author_id=${smallAuthor}&fields=id`)).toHaveLength(1);
      const single = await get(`/quotes/random?author_id=${smallAuthor}`);
      expect(Array.isArray(single.json())).toBe(false);
    });

    it('draws among the quotes a search finds, and only them', async () => {
      // A word of the first quote's text; as the last word of q it matches the words it begins.
      const word = words(quotes[0]?.quote ?? '')[0] as string;
      const found = quotes.filter((q) =>
        [q.quote, q.author, q.work].some((text) => words(text).some((w) => w.startsWith(word))),
      );
      expect(found.length).toBeGreaterThan(0);
      const byId = new Map(found.map((q) => [q.id, q]));
      for (const params of [
        `count=50&q=${encodeURIComponent(word)}`,
        `count=3&q=${encodeURIComponent(word)}&max_length=10000`,
      ]) {
        const drawn = await sample(params);
        expect(drawn).toHaveLength(Math.min(Number(/count=(\d+)/.exec(params)?.[1]), found.length));
        expect(new Set(drawn.map((q) => q.id)).size).toBe(drawn.length);
        for (const q of drawn) expect(q).toEqual(byId.get(q.id));
      }
    });

    it('answers 404 when nothing matches, and 400 naming count for a bad count', async () => {
      const none = await get('/quotes/random?count=3&author_id=999999');
      expect(none.statusCode).toBe(404);
      expect((none.json() as { error: string }).error).toBe('not_found');
      for (const bad of ['0', '51', '-1', '1.5', 'abc', '03', '', '3&count=4']) {
        const response = await get(`/quotes/random?count=${bad}`);
        expect(response.statusCode, bad).toBe(400);
        expect((response.json() as { details: string }).details).toMatch(/^count /);
      }
      const onList = await get('/quotes?count=3');
      expect(onList.statusCode).toBe(400);
      expect((onList.json() as { details: string }).details).toMatch(/^count is not accepted on \/quotes/);
    });

    it('draws every ordered pair of a small match set equally often', async () => {
      const ids = smallSet.map((q) => q.id);
      const cells = new Map<string, number>();
      for (const a of ids) for (const b of ids) if (a !== b) cells.set(`${a},${b}`, 0);
      const rounds = cells.size * 20;
      for (let i = 0; i < rounds; i++) {
        const drawn = await sample(`count=2&author_id=${smallAuthor}&fields=id`);
        const key = drawn.map((q) => q.id).join(',');
        expect(cells.has(key), key).toBe(true);
        cells.set(key, (cells.get(key) as number) + 1);
      }
      // At most 29 degrees of freedom: P(chi-square > 130) is below 1e-13.
      expect(chiSquare([...cells.values()])).toBeLessThan(130);
    }, 120_000);

    it('draws from the whole of a large match set uniformly', async () => {
      // Ten buckets of ids; 60 draws of 50 put 300 quotes in each on average.
      const buckets = new Array<number>(10).fill(0);
      const size = quotes.length / buckets.length;
      for (let i = 0; i < 60; i++) {
        for (const q of await sample('count=50&fields=id')) {
          const at = quotes.findIndex((x) => x.id === q.id);
          buckets[Math.floor(at / size)] = (buckets[Math.floor(at / size)] as number) + 1;
        }
      }
      // 9 degrees of freedom: P(chi-square > 60) is below 1e-9.
      expect(chiSquare(buckets)).toBeLessThan(60);
    }, 120_000);
  });
}
