/**
 * The suite of `/authors`, `/works` and their ids, over HTTP, run on every engine (authors.test.ts,
 * authors-meilisearch.test.ts): every answer is compared with the reference model of
 * catalogue/authors.ts on the bundled catalogue and on a generated one, then the contract's
 * errors, ETags and rate limit are checked as on the quote paths.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateQuotes } from '../indexer/generate.ts';
import {
  AUTHOR_FIELDS,
  DIRECTORY_SORTS,
  type DirectoryQuery,
  modelDirectory,
  WORK_FIELDS,
} from './catalogue/authors.ts';
import { codePointLength, normaliseFilters, type Quote, type RawFilters } from './catalogue/port.ts';
import type { Serve, Served } from './facets.suite.ts';
import { errorOf, get } from './test-app.ts';

const BUNDLED: Quote[] = (
  JSON.parse(readFileSync(fileURLToPath(new URL('../data/quotes.json', import.meta.url)), 'utf8')) as Omit<
    Quote,
    'quote_length'
  >[]
).map((record) => ({ ...record, quote_length: codePointLength(record.quote) }));

/** 3,000 generated quotes: about 50 authors and 120 works, languages and categories mixed. */
const GENERATED: Quote[] = [...generateQuotes(3_000, 11)].map((q) => ({
  ...q,
  quote_length: codePointLength(q.quote),
}));

/** A list request as a query string, and the port query the model answers. */
function request(
  kind: 'authors' | 'works',
  raw: RawFilters,
  sort: number,
  direction: 'asc' | 'desc',
  page: number,
  limit: number,
): { url: string; query: DirectoryQuery } {
  const like = kind === 'authors' ? 'name_like' : 'title_like';
  const params = new URLSearchParams();
  for (const [name, values] of Object.entries(raw)) {
    const shown = name === 'author_like' || name === 'work_like' ? like : name;
    for (const value of values as string[]) params.append(shown, value);
  }
  const sortName = kind === 'works' && sort === 0 ? 'title' : DIRECTORY_SORTS[sort];
  params.set('sort', sortName as string);
  params.set('order', direction);
  params.set('page', String(page));
  params.set('limit', String(limit));
  return {
    url: `/${kind}?${params}`,
    query: {
      filters: normaliseFilters(raw),
      sort: DIRECTORY_SORTS[sort] as DirectoryQuery['sort'],
      direction,
      page,
      limit,
    },
  };
}

export function describeDirectory(engine: string, serve: Serve): void {
  describe(`authors and works (${engine})`, () => {
    for (const [name, catalogue] of [
      ['the bundled catalogue', BUNDLED],
      ['a generated catalogue', GENERATED],
    ] as const) {
      describe(name, () => {
        let served: Served;
        const model = modelDirectory(catalogue);
        beforeAll(async () => {
          served = await serve(catalogue);
        }, 180_000);
        afterAll(async () => {
          await served?.close();
        });

        const first = catalogue[0] as Quote;
        const filterSets: RawFilters[] = [
          {},
          { category: ['POETRY'] },
          { genre: ['tragedy', 'romance'] },
          { language: ['fr', 'DE'] },
          { author_like: [first.author.split(' ')[0]?.slice(0, 3) ?? 'a'] },
          { work_like: ['the'], category: ['fiction'] },
          { language: ['en'], genre: [first.genre[0] as string] },
          { category: ['nothing at all'] },
          { author_id: [String(first.author_id), '999999'] },
        ];

        it('lists exactly the model: every filter set, order and page, with exact totals', async () => {
          const checked: string[] = [];
          for (const kind of ['authors', 'works'] as const) {
            for (const raw of filterSets) {
              if (kind === 'authors' && raw.work_like !== undefined) continue;
              if (kind === 'works' && raw.author_like !== undefined) continue;
              if (kind === 'authors' && raw.author_id !== undefined) continue;
              for (let sort = 0; sort < DIRECTORY_SORTS.length; sort++) {
                for (const direction of ['asc', 'desc'] as const) {
                  const expected = await (kind === 'authors' ? model.authors : model.works)(
                    request(kind, raw, sort, direction, 1, 7).query,
                  );
                  const pages = Math.max(1, Math.ceil(expected.total / 7));
                  for (const page of [...new Set([1, 2, pages, pages + 1])]) {
                    const { url, query } = request(kind, raw, sort, direction, page, 7);
                    const want = await (kind === 'authors' ? model.authors : model.works)(query);
                    const response = await get(served.app, url);
                    if (want.total === 0 || want.items.length === 0) {
                      expect(response.statusCode, `${url}: ${response.body}`).toBe(404);
                      continue;
                    }
                    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
                    expect(response.json(), url).toEqual({
                      items: want.items,
                      pagination: {
                        page,
                        limit: 7,
                        total_pages: Math.ceil(want.total / 7),
                        [`total_${kind}`]: want.total,
                      },
                    });
                    checked.push(url);
                  }
                }
              }
            }
          }
          expect(checked.length).toBeGreaterThan(100);
        }, 120_000);

        it('answers every author and every work by id as the model does, and 404 for unknown ids', async () => {
          const authorIds = [...new Set(catalogue.map((q) => q.author_id))];
          const workIds = [...new Set(catalogue.map((q) => q.work_id))];
          for (const id of authorIds) {
            const response = await get(served.app, `/authors/${id}`);
            expect(response.statusCode).toBe(200);
            expect(response.json(), `/authors/${id}`).toEqual(await model.author(id));
          }
          for (const id of workIds) {
            const response = await get(served.app, `/works/${id}`);
            expect(response.statusCode).toBe(200);
            expect(response.json(), `/works/${id}`).toEqual(await model.work(id));
          }
          const unknown = Math.max(...authorIds, ...workIds) + 1;
          for (const path of [`/authors/${unknown}`, `/works/${unknown}`, '/authors/99999999999999999999']) {
            expect(errorOf(await get(served.app, path)).code, path).toBe(404);
          }
        }, 120_000);

        it("an author's quote_count is the total of /quotes?author_id=, and of its works' counts", async () => {
          const id = first.author_id;
          const author = (await get(served.app, `/authors/${id}`)).json() as {
            quote_count: number;
            works: { quote_count: number }[];
          };
          const quotes = (await get(served.app, `/quotes?author_id=${id}&limit=1`)).json() as {
            pagination: { total_quotes: number };
          };
          expect(author.quote_count).toBe(quotes.pagination.total_quotes);
          expect(author.works.reduce((sum, w) => sum + w.quote_count, 0)).toBe(author.quote_count);
        });
      });
    }

    describe('requests', () => {
      let served: Served;
      beforeAll(async () => {
        served = await serve(BUNDLED);
      }, 180_000);
      afterAll(async () => {
        await served?.close();
      });

      it('fields: exactly the requested keys in item order; unknown names a 400', async () => {
        const authors = (await get(served.app, '/authors?fields=quote_count,id&limit=3')).json() as {
          items: object[];
        };
        for (const item of authors.items) expect(Object.keys(item)).toEqual(['id', 'quote_count']);
        const works = (
          await get(served.app, `/works?fields=${[...WORK_FIELDS].reverse().join(',')}`)
        ).json() as {
          items: object[];
        };
        for (const item of works.items) expect(Object.keys(item)).toEqual([...WORK_FIELDS]);
        expect(AUTHOR_FIELDS).toEqual(['id', 'name', 'quote_count']);
        for (const url of ['/authors?fields=title', '/works?fields=name', '/authors?fields=id,,name']) {
          expect(errorOf(await get(served.app, url)).details, url).toMatch(/^fields /);
        }
      });

      it('every bad parameter is a 400 naming it', async () => {
        const cases: [string, RegExp][] = [
          ['/authors?sort=title', /^sort must be one of name, quote_count, id/],
          ['/works?sort=name', /^sort must be one of title, quote_count, id/],
          ['/authors?order=up', /^order must be asc or desc/],
          ['/authors?limit=101', /^limit must be/],
          ['/authors?page=0', /^page must be/],
          ['/authors?name_like=-', /^name_like must contain at least one letter or digit/],
          ['/works?title_like=', /^title_like must not be empty/],
          ['/authors?language=xx', /^language must be an ISO 639-1/],
          ['/authors?author_id=1', /^author_id is not accepted on \/authors/],
          ['/authors?title_like=x', /^unknown parameter 'title_like'/],
          ['/works?author_id=x', /^author_id must be an integer/],
          ['/authors?sort=id&sort=name', /^sort must be given at most once/],
          ['/authors/0', /^id must be an integer ≥ 1/],
          ['/works/abc', /^id must be an integer ≥ 1/],
          ['/authors/1?fields=id', /^\/authors\/\{id\} takes no parameters/],
        ];
        for (const [url, details] of cases) {
          const error = errorOf(await get(served.app, url));
          expect({ url, code: error.code, error: error.error }).toEqual({
            url,
            code: 400,
            error: 'bad_request',
          });
          expect(error.details, url).toMatch(details);
        }
      });

      it('carries an ETag and Cache-Control as the quote paths do, and answers 304 to it', async () => {
        for (const url of ['/authors?sort=quote_count&order=desc', '/authors/1', '/works', '/works/1']) {
          const response = await get(served.app, url);
          expect(response.statusCode).toBe(200);
          expect(response.headers['cache-control']).toBe('private, max-age=60');
          const etag = response.headers.etag as string;
          expect(etag).toMatch(/^W\/"/);
          expect((await get(served.app, url, { 'if-none-match': etag })).statusCode).toBe(304);
        }
        const a = (await get(served.app, '/authors?language=fr&language=de')).headers.etag;
        const b = (await get(served.app, '/authors?language=DE&language=fr')).headers.etag;
        expect(a).toBe(b);
        expect((await get(served.app, '/authors?language=de')).headers.etag).not.toBe(a);
      });

      it('is counted by the rate limit as the quote paths are', async () => {
        const before = Number((await get(served.app, '/quotes/1')).headers['x-ratelimit-remaining']);
        const authors = await get(served.app, '/authors');
        const work = await get(served.app, '/works/999999');
        expect(Number(authors.headers['x-ratelimit-remaining'])).toBe(before - 1);
        expect(Number(work.headers['x-ratelimit-remaining'])).toBe(before - 2);
        expect(work.statusCode).toBe(404);
      });
    });
  });
}
