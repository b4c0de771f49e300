/**
 * `GET /quotes/facets` over HTTP, against a model written here from the feature's text: the
 * matching quotes (filters as the contract states them), their values grouped by folded form,
 * exact counts, most frequent first then by folded value, and each value shown as the lowest-id
 * quote of the catalogue spells it. The model folds, matches and orders with its own plain code
 * (not the service's `fold`, matchers or comparators). Two catalogues: the bundled data set, and
 * a generated one (accents, apostrophes, hyphens) with variants added that fold together across
 * case, accents, spacing, full-width letters and CJK, a title long enough that the Meilisearch
 * adapter stores it as a digest, and genre lists naming one genre twice. Every backend runs it
 * unchanged (facets.test.ts: SQLite; facets-meilisearch.test.ts: a real Meilisearch).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateQuotes } from '../indexer/generate.ts';
import type { Quote } from './catalogue/port.ts';
import { basic, errorOf, get } from './test-app.ts';

/** An app serving `quotes`, and how to close it with its catalogue. */
export interface Served {
  app: FastifyInstance;
  close(): Promise<void>;
}
export type Serve = (quotes: readonly Quote[]) => Promise<Served>;

// ---------------------------------------------------------------------------------------------
// The model.

const plainFold = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/\p{White_Space}+/u)
    .filter((part) => part !== '')
    .join(' ');
const plainWords = (text: string) => plainFold(text).match(/[\p{L}\p{N}]+/gu) ?? [];
const byCodePoint = (a: string, b: string) => {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  }
  return x.length - y.length;
};

type Field = 'author' | 'work' | 'category' | 'genre';
const FIELDS: readonly Field[] = ['author', 'work', 'category', 'genre'];
const valuesOf = (quote: Quote, field: Field): string[] => (field === 'genre' ? quote.genre : [quote[field]]);

/** The filters the model knows: a few of each kind, enough to narrow every facet differently. */
type ModelFilters = Partial<Record<Field, string[]>> & {
  author_like?: string[];
  work_id?: number[];
  /** One search: every word a word of the text, author or work; the last may be a word's beginning. */
  q?: [string];
  max_length?: [number];
};

function matchesModel(quote: Quote, filters: ModelFilters): boolean {
  for (const field of FIELDS) {
    const wanted = filters[field];
    if (wanted === undefined) continue;
    const own = valuesOf(quote, field).map(plainFold);
    if (!wanted.some((value) => own.includes(plainFold(value)))) return false;
  }
  if (filters.author_like !== undefined) {
    const own = plainWords(quote.author);
    const ok = filters.author_like.some((value) =>
      plainWords(value).every((prefix) => own.some((word) => word.startsWith(prefix))),
    );
    if (!ok) return false;
  }
  if (filters.work_id !== undefined && !filters.work_id.includes(quote.work_id)) return false;
  if (filters.max_length !== undefined && Array.from(quote.quote).length > filters.max_length[0])
    return false;
  if (filters.q !== undefined) {
    const own = [quote.quote, quote.author, quote.work].flatMap(plainWords);
    const wanted = plainWords(filters.q[0]);
    const last = wanted.length - 1;
    const found = wanted.every((word, i) => own.some((w) => (i === last ? w.startsWith(word) : w === word)));
    if (!found) return false;
  }
  return true;
}

interface Expected {
  total_quotes: number;
  facets: Partial<Record<Field, { value: string; count: number }[]>>;
}

function model(catalogue: readonly Quote[], filters: ModelFilters, fields: Field[], limit: number): Expected {
  const byId = [...catalogue].sort((a, b) => a.id - b.id);
  const matching = byId.filter((quote) => matchesModel(quote, filters));
  const facets: Expected['facets'] = {};
  for (const field of FIELDS) {
    if (!fields.includes(field)) continue;
    const spelling = new Map<string, string>();
    for (const quote of byId) {
      for (const value of valuesOf(quote, field)) {
        if (!spelling.has(plainFold(value))) spelling.set(plainFold(value), value);
      }
    }
    const counts = new Map<string, number>();
    for (const quote of matching) {
      for (const folded of new Set(valuesOf(quote, field).map(plainFold))) {
        counts.set(folded, (counts.get(folded) ?? 0) + 1);
      }
    }
    facets[field] = [...counts]
      .sort(([a, x], [b, y]) => y - x || byCodePoint(a, b))
      .slice(0, limit)
      .map(([folded, count]) => ({ value: spelling.get(folded) as string, count }));
  }
  return { total_quotes: matching.length, facets };
}

function queryString(filters: ModelFilters, fields: Field[], limit: number | undefined): string {
  const params = new URLSearchParams();
  for (const field of fields) params.append('facet', field);
  for (const [name, values] of Object.entries(filters)) {
    for (const value of values as (string | number)[]) params.append(name, String(value));
  }
  if (limit !== undefined) params.set('limit', String(limit));
  return params.toString();
}

// ---------------------------------------------------------------------------------------------
// The catalogues.

const BUNDLED: Quote[] = (
  JSON.parse(readFileSync(fileURLToPath(new URL('../data/quotes.json', import.meta.url)), 'utf8')) as Omit<
    Quote,
    'quote_length'
  >[]
).map((record) => ({ ...record, quote_length: Array.from(record.quote).length }));

const LONG_TITLE = `長${'い題名の本'.repeat(40)}`;

/** Generated quotes, then spellings that fold together, each group's lowest id on an odd one. */
function generatedCatalogue(): Quote[] {
  const quotes: Quote[] = Array.from(generateQuotes(1_500, 7), (q) => ({
    ...q,
    quote_length: Array.from(q.quote).length,
  }));
  let id = 900_000;
  const add = (
    author: string,
    author_id: number,
    work: string,
    work_id: number,
    category: string,
    genre: string[],
  ) => {
    id += 7;
    const quote = `A quote of ${work} by ${author}.`;
    quotes.push({
      id,
      author,
      author_id,
      work,
      work_id,
      category,
      genre,
      publish_date: '1901-02',
      quote_length: Array.from(quote).length,
      source: `https://example.org/${id}`,
      quote,
      language: 'fr',
    });
  };
  add('ÉMILE  ZOLA', 80_001, 'La Bête humaine', 90_001, 'Roman', ['Nouveau Roman', 'nouveau  roman']);
  add('Émile Zola', 80_002, 'la bete humaine', 90_002, 'roman', ['NOUVEAU ROMAN', 'naturalisme']);
  add('emile zola', 80_003, 'LA BÊTE HUMAINE', 90_003, 'ROMAN', ['Naturalisme']);
  add('Émile Zola', 80_002, 'Germinal', 90_004, 'Roman', ['naturalisme']);
  add('Ｍｕｒａｋａｍｉ 春樹', 80_004, '海辺のカフカ', 90_005, 'フィクション', ['ﾌｧﾝﾀｼﾞｰ']);
  add('Murakami 春樹', 80_005, '海辺の カフカ', 90_006, 'フィクション', ['ファンタジー', 'Magic-Realism']);
  add("Flannery O'Connor", 80_006, `Ａ${LONG_TITLE}`, 90_007, 'fiction', ['Southern-Gothic', 'gothic']);
  add("flannery o'connor", 80_007, `a${LONG_TITLE}`, 90_008, 'Fiction', ['southern-gothic']);
  return quotes;
}

// ---------------------------------------------------------------------------------------------
// The suite.

export function describeFacets(engine: string, serve: Serve): void {
  describe(`GET /quotes/facets (${engine})`, () => {
    for (const [name, catalogue] of [
      ['the bundled catalogue', BUNDLED],
      ['a generated catalogue with folded variants', generatedCatalogue()],
    ] as const) {
      describe(name, () => {
        let served: Served;
        beforeAll(async () => {
          served = await serve(catalogue);
        }, 120_000);
        afterAll(async () => {
          await served?.close();
        });

        const author = catalogue[0]?.author as string;
        const firstWords = plainWords(catalogue[0]?.quote ?? '');
        const cases: [ModelFilters, Field[], number | undefined][] = [
          [{}, ['author', 'work', 'category', 'genre'], undefined],
          [{}, ['genre'], 100],
          [{}, ['author'], 1],
          [{}, ['category', 'work'], 7],
          [{ category: ['FICTION'] }, ['genre', 'author'], 30],
          [{ genre: ['romance', 'Naturalisme', 'gothic'] }, ['genre', 'category', 'work'], undefined],
          [{ author: [author.toUpperCase()] }, ['work', 'genre'], 100],
          [{ author_like: ['zol', 'o conn', 'mura'] }, ['author', 'work', 'genre', 'category'], 100],
          [{ author_like: ['a'], category: ['fiction', 'roman'] }, ['author'], 13],
          [{ work_id: [catalogue[1]?.work_id as number, 90_004] }, ['genre', 'author'], undefined],
          [{ author: ['nobody at all'] }, ['genre'], undefined],
          [{ q: [firstWords[0] as string] }, ['author', 'genre'], 10],
          [{ q: [`${firstWords[0]} ${(firstWords[1] ?? '').slice(0, 3)}`] }, ['work', 'category'], undefined],
          [{ q: [firstWords[0] as string], category: ['fiction'] }, ['genre'], 5],
          [{ q: ['zzzzqqq'] }, ['genre'], undefined],
          [{ max_length: [120] }, ['genre', 'category'], undefined],
          [{ q: [firstWords[0] as string], max_length: [400] }, ['author', 'work'], 50],
        ];
        for (const [filters, fields, limit] of cases) {
          const query = queryString(filters, fields, limit);
          it(`answers ?${query} as the model does`, async () => {
            const response = await get(served.app, `/quotes/facets?${query}`);
            expect(response.statusCode, response.body).toBe(200);
            expect(response.json()).toEqual(model(catalogue, filters, fields, limit ?? 20));
          });
        }

        it('counts a value as many quotes as the filter on that value lists', async () => {
          const facets = (
            await get(served.app, '/quotes/facets?facet=genre&facet=author&limit=5')
          ).json() as Expected;
          for (const [field, values] of Object.entries(facets.facets)) {
            for (const { value, count } of values ?? []) {
              const list = await get(
                served.app,
                `/quotes?${new URLSearchParams({ [field]: value, limit: '1' })}`,
              );
              expect(list.json().pagination.total_quotes, `${field}=${value}`).toBe(count);
            }
          }
        });
      });
    }

    describe('the request', () => {
      let served: Served;
      beforeAll(async () => {
        served = await serve(BUNDLED);
      }, 120_000);
      afterAll(async () => {
        await served?.close();
      });

      it('names the parameter of every 400', async () => {
        const cases: [string, RegExp][] = [
          ['', /^facet is required on \/quotes\/facets; give one or more of author, work, category, genre/],
          ['author=x', /^facet is required/],
          [
            'facet=genre,title',
            /^facet does not accept 'title'; allowed: author, work, category, genre, language$/,
          ],
          ['facet=Genre', /^facet does not accept 'Genre'/],
          ['facet=', /^facet must not be empty; expected one or more of author, work, category, genre/],
          ['facet=genre,', /^facet has an empty item/],
          ['facet=genre&limit=0', /^limit must be an integer from 1 to 100, got '0'$/],
          ['facet=genre&limit=101', /^limit must be an integer from 1 to 100, got '101'$/],
          ['facet=genre&limit=5&limit=6', /^limit must be given at most once/],
          ['facet=genre&sort=id', /^sort is not accepted on \/quotes\/facets; \/quotes\/facets accepts /],
          ['facet=genre&page=2', /^page is not accepted on \/quotes\/facets/],
          ['facet=genre&author_like=--', /^author_like must contain at least one letter or digit/],
          ['facet=genre&colour=red', /^unknown parameter 'colour'/],
        ];
        for (const [query, details] of cases) {
          const response = await get(served.app, `/quotes/facets?${query}`);
          expect(errorOf(response).error, query).toBe('bad_request');
          expect(errorOf(response).details, query).toMatch(details);
        }
      });

      it('takes facets repeated or comma-separated, in any order, duplicates ignored, with one ETag', async () => {
        const answers = await Promise.all(
          ['facet=genre&facet=category', 'facet=category,genre', 'facet=genre,category,genre'].map((q) =>
            get(served.app, `/quotes/facets?${q}`),
          ),
        );
        const [first, ...others] = answers;
        expect(Object.keys(first?.json().facets)).toEqual(['category', 'genre']);
        for (const other of others) {
          expect(other.body).toBe(first?.body);
          expect(other.headers.etag).toBe(first?.headers.etag);
        }
        const narrower = await get(served.app, '/quotes/facets?facet=genre&facet=category&limit=3');
        expect(narrower.headers.etag).not.toBe(first?.headers.etag);
      });

      it('answers If-None-Match with 304, carries Cache-Control and the rate-limit headers', async () => {
        const first = await get(served.app, '/quotes/facets?facet=genre&genre=romance');
        expect(first.headers['cache-control']).toBe('private, max-age=60');
        expect(first.headers['x-ratelimit-remaining']).toBeDefined();
        const again = await get(served.app, '/quotes/facets?facet=genre&genre=ROMANCE', {
          'if-none-match': first.headers.etag as string,
        });
        expect(again.statusCode).toBe(304);
        expect(again.body).toBe('');
      });

      it('needs credentials like every quote path', async () => {
        const anonymous = await served.app.inject({ method: 'GET', url: '/quotes/facets?facet=genre' });
        expect(errorOf(anonymous).error).toBe('unauthorized');
        const signedIn = await served.app.inject({
          method: 'GET',
          url: '/quotes/facets?facet=genre',
          headers: { authorization: basic('dev:dev') },
        });
        expect(signedIn.statusCode).toBe(200);
        const other = await served.app.inject({ method: 'POST', url: '/quotes/facets?facet=genre' });
        expect(other.statusCode).toBe(405);
      });
    });
  });
}
