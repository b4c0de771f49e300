/**
 * Range filters over HTTP (`min_length`, `max_length`, `published_from`, `published_to`), the
 * same requests and expectations on every engine (ranges.test.ts: SQLite;
 * ranges-meilisearch.test.ts: a real Meilisearch). Expectations come from an oracle written here
 * from the rule's text: lengths counted as code points, dates compared as (year, month, day)
 * with a missing month or day read as 1, independent of the service's day numbers.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Quote } from './catalogue/port.ts';
import { bundledQuotes, type EngineBackend, engineApp, generatedQuotes } from './test-support/engine-apps.ts';

const BYPASS = { 'x-bypass-auth': 'true' };

/** A date's first day as (year, month, day). */
function firstDay(date: string): [number, number, number] {
  const [y, m, d] = date.split('-').map(Number);
  return [y as number, m ?? 1, d ?? 1];
}

function compareDays(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

interface Bounds {
  min_length?: number;
  max_length?: number;
  published_from?: string;
  published_to?: string;
}

function within(q: Quote, b: Bounds): boolean {
  const length = Array.from(q.quote).length;
  if (b.min_length !== undefined && length < b.min_length) return false;
  if (b.max_length !== undefined && length > b.max_length) return false;
  const day = firstDay(q.publish_date);
  if (b.published_from !== undefined && compareDays(day, firstDay(b.published_from)) < 0) return false;
  if (b.published_to !== undefined && compareDays(day, firstDay(b.published_to)) > 0) return false;
  return true;
}

function query(b: Bounds): string {
  return Object.entries(b)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
}

/** Small catalogue of dates of every precision around one year's boundaries, lengths 1 to 12. */
const EDGES: Quote[] = [
  ['1812-12-31', 'a'],
  ['1813', 'ab'],
  ['1813-01', 'abc'],
  ['1813-01-01', 'abcd'],
  ['1813-01-28', 'abcde'],
  ['1813-02', 'abcdef'],
  ['1813-12-31', 'abcdefg'],
  ['1814', 'abcdefgh'],
  ['0800', '紫式部の物語'],
  ['2000-02-29', 'Brontë’s x'],
  ['1900-02-28', 'abcdefghijk'],
  ['1900-03', 'abcdefghijkl'],
].map(([date, text], i) => ({
  id: 10 * (i + 1),
  author: i % 2 === 0 ? 'Émile Zola' : "Flannery O'Connor",
  author_id: i % 2 === 0 ? 1 : 2,
  work: `Work ${i}`,
  work_id: i + 1,
  category: i % 3 === 0 ? 'poetry' : 'fiction',
  genre: ['satire'],
  publish_date: date as string,
  quote_length: Array.from(text as string).length,
  source: 'https://example.org/w',
  quote: text as string,
  language: 'en',
}));

export function describeRanges(backend: EngineBackend): void {
  const title = `range filters on ${backend.name}`;
  if (backend.skip !== undefined) {
    describe.skip(`${title} (skipped: ${backend.skip})`, () => {
      it('needs the engine', () => {});
    });
    return;
  }
  describe(title, () => {
    const catalogues: Record<string, { quotes: Quote[]; app?: FastifyInstance }> = {
      bundled: { quotes: bundledQuotes() },
      generated: { quotes: generatedQuotes(700, 11) },
      edges: { quotes: EDGES },
    };
    const removals: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      await backend.start();
      for (const catalogue of Object.values(catalogues)) {
        const served = await backend.serve(catalogue.quotes);
        removals.push(served.remove);
        catalogue.app = await engineApp(served.env);
      }
    }, 180_000);

    afterAll(async () => {
      for (const c of Object.values(catalogues)) await c.app?.close();
      for (const remove of removals) await remove();
      await backend.stop();
    });

    const get = (name: string, url: string) => {
      const app = catalogues[name]?.app;
      if (app === undefined) throw new Error(`no app serves the ${name} catalogue`);
      return app.inject({ method: 'GET', url, headers: BYPASS });
    };

    /** Every id of a filtered listing, page by page, in the listing's order; and its total. */
    async function allIds(name: string, params: string): Promise<{ ids: number[]; total: number }> {
      const ids: number[] = [];
      let total = 0;
      for (let page = 1; ; page++) {
        const response = await get(name, `/quotes?${params}&limit=100&page=${page}&fields=id`);
        if (response.statusCode === 404 && page === 1) return { ids, total: 0 };
        expect(response.statusCode, response.body).toBe(200);
        const body = response.json() as {
          items: { id: number }[];
          pagination: { total_quotes: number; total_pages: number };
        };
        ids.push(...body.items.map((i) => i.id));
        total = body.pagination.total_quotes;
        if (page >= body.pagination.total_pages) return { ids, total };
      }
    }

    const BOUNDS: Bounds[] = [
      { min_length: 100 },
      { max_length: 60 },
      { min_length: 50, max_length: 120 },
      { min_length: 80, max_length: 80 },
      { published_from: '1850' },
      { published_to: '1813' },
      { published_from: '1813-01', published_to: '1813-12-31' },
      { published_from: '1600-06', published_to: '1899-12' },
      { published_from: '1900-03-01', published_to: '2024' },
      { min_length: 40, max_length: 200, published_from: '1800', published_to: '1900-06-15' },
      { min_length: 1_000_000 },
      { published_from: '9999-12-31' },
    ];
    const FILTERS = ['', 'category=poetry', 'category=fiction&genre=satire', 'author_id=1&author_id=3'];

    for (const name of ['bundled', 'generated']) {
      it(`lists exactly the quotes in range, with every filter, on the ${name} catalogue`, async () => {
        const quotes = catalogues[name]?.quotes as Quote[];
        for (const bounds of BOUNDS) {
          for (const filter of FILTERS) {
            const params = [query(bounds), filter].filter((p) => p !== '').join('&');
            const wanted = quotes
              .filter((q) => within(q, bounds))
              .filter((q) => {
                const f = new URLSearchParams(filter);
                const cats = f.getAll('category');
                const genres = f.getAll('genre');
                const authors = f.getAll('author_id').map(Number);
                return (
                  (cats.length === 0 || cats.includes(q.category.toLowerCase())) &&
                  (genres.length === 0 || q.genre.some((g) => genres.includes(g.toLowerCase()))) &&
                  (authors.length === 0 || authors.includes(q.author_id))
                );
              })
              .map((q) => q.id)
              .sort((a, b) => a - b);
            const { ids, total } = await allIds(name, params);
            expect(ids, params).toEqual(wanted);
            expect(total, params).toBe(wanted.length);
          }
        }
      });

      it(`sorts and pages a range by length and by date on the ${name} catalogue`, async () => {
        const quotes = catalogues[name]?.quotes as Quote[];
        const bounds: Bounds = { min_length: 45, max_length: 150, published_from: '1700-05' };
        const inRange = quotes.filter((q) => within(q, bounds));
        const byLength = [...inRange].sort(
          (a, b) =>
            b.quote_length - a.quote_length ||
            (a.publish_date < b.publish_date ? -1 : a.publish_date > b.publish_date ? 1 : 0) ||
            a.id - b.id,
        );
        const { ids } = await allIds(name, `${query(bounds)}&sort=quote_length,publish_date&order=desc,asc`);
        expect(ids).toEqual(byLength.map((q) => q.id));
      });

      it(`draws random quotes only from the range on the ${name} catalogue`, async () => {
        const quotes = catalogues[name]?.quotes as Quote[];
        const bounds: Bounds = { max_length: 70, published_to: '1900' };
        const allowed = new Set(quotes.filter((q) => within(q, bounds)).map((q) => q.id));
        expect(allowed.size).toBeGreaterThan(1);
        for (let i = 0; i < 25; i++) {
          const response = await get(name, `/quotes/random?${query(bounds)}&fields=id`);
          expect(response.statusCode, response.body).toBe(200);
          expect(allowed.has((response.json() as { id: number }).id)).toBe(true);
        }
      });
    }

    it('compares partial dates by their first day, in the catalogue and in the request', async () => {
      const ids = async (params: string) => (await allIds('edges', params)).ids;
      // 1813, 1813-01 and 1813-01-01 are all the first of January 1813.
      expect(await ids('published_to=1813')).toEqual([10, 20, 30, 40, 90]);
      expect(await ids('published_from=1813&published_to=1813-01-01')).toEqual([20, 30, 40]);
      expect(await ids('published_from=1813-01-02&published_to=1813-12')).toEqual([50, 60]);
      expect(await ids('published_from=1813-12-31&published_to=1814')).toEqual([70, 80]);
      expect(await ids('published_from=1900-02-28&published_to=1900-03')).toEqual([110, 120]);
      expect(await ids('published_from=2000-02-29')).toEqual([100]);
      expect(await ids('published_to=0800')).toEqual([90]);
      // Lengths are code points: the CJK quote holds 6 of them, the accented one 10.
      expect(await ids('min_length=6&max_length=6')).toEqual([60, 90]);
      expect(await ids('min_length=10&max_length=10&author=emile+zola')).toEqual([]);
      expect(await ids('min_length=10&max_length=10')).toEqual([100]);
      expect(await ids('min_length=0&max_length=2&published_from=1813')).toEqual([20]);
      const none = await get('edges', '/quotes/random?min_length=13');
      expect(none.statusCode).toBe(404);
    });

    it('answers 400 naming the parameter for a bad value, a repeat or an inverted range', async () => {
      const cases: [string, string][] = [
        ['min_length=abc', 'min_length'],
        ['min_length=-1', 'min_length'],
        ['max_length=1.5', 'max_length'],
        ['max_length=1000001', 'max_length'],
        ['max_length=00012', 'max_length'],
        ['min_length=', 'min_length'],
        ['min_length=5&min_length=6', 'min_length'],
        ['published_from=1813-13', 'published_from'],
        ['published_from=1813-02-29', 'published_from'],
        ['published_to=18130', 'published_to'],
        ['published_to=1813-1-1', 'published_to'],
        ['published_to=%201813', 'published_to'],
        ['min_length=20&max_length=10', 'min_length'],
        ['published_from=1814&published_to=1813-12-31', 'published_from'],
        ['published_from=1813-05&published_to=1813', 'published_from'],
      ];
      for (const path of ['/quotes', '/quotes/random']) {
        for (const [params, name] of cases) {
          const response = await get('edges', `${path}?${params}`);
          expect(response.statusCode, `${path}?${params}`).toBe(400);
          const body = response.json() as { code: number; error: string; details: string };
          expect(body.error).toBe('bad_request');
          expect(body.details, params).toContain(name);
        }
      }
      // Equal bounds are a range of one value, not an inverted one.
      expect((await get('edges', '/quotes?published_from=1813&published_to=1813-01-01')).statusCode).toBe(
        200,
      );
    });

    it('gives ranges their own ETag', async () => {
      const a = await get('bundled', '/quotes?min_length=50');
      const b = await get('bundled', '/quotes?min_length=51');
      const c = await get('bundled', '/quotes?min_length=50&published_from=1000');
      expect(a.headers.etag).not.toBe(b.headers.etag);
      expect(a.headers.etag).not.toBe(c.headers.etag);
      expect((await get('bundled', '/quotes?min_length=50')).headers.etag).toBe(a.headers.etag);
    });
  });
}
