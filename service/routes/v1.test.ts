/** `GET /api/v1/quotes` over the real SQLite backend (docs/api.md#the-genre-form). */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Quote, SortKey } from '../catalogue/port.ts';
import {
  buildFixtureCatalogue,
  errorOf,
  expected,
  type FixtureCatalogue,
  fixtureApp,
  get,
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

interface V1Body {
  status_code: number;
  data: Partial<Quote>[];
  pagination: { page: number; limit: number; total_pages: number; total_quotes: number };
}

async function v1(query: string): Promise<V1Body> {
  const response = await get(app, `/api/v1/quotes?${query}`);
  expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
  return response.json() as V1Body;
}

const v1Item = (q: Quote) => ({
  id: q.id,
  author: q.author,
  work: q.work,
  genre: q.genre,
  publish_date: q.publish_date,
  quote_length: q.quote_length,
  source: q.source,
  quote: q.quote,
});

describe('GET /api/v1/quotes', () => {
  it('returns the envelope, 10 per page by author ascending, items with exactly eight fields', async () => {
    const body = await v1('genre=romance');
    const all = expected({ genre: ['romance'] }, [{ field: 'author', direction: 'asc' }]);
    expect(body).toEqual({
      status_code: 200,
      data: all.slice(0, 10).map(v1Item),
      pagination: { page: 1, limit: 10, total_pages: Math.ceil(all.length / 10), total_quotes: all.length },
    });
    // Charlotte Brontë before Jane Austen; ties by id.
    expect(body.data.map((q) => q.id).slice(0, 5)).toEqual([3, 56, 64, 211, 5]);
    for (const item of body.data) {
      expect(Object.keys(item)).toEqual([
        'id',
        'author',
        'work',
        'genre',
        'publish_date',
        'quote_length',
        'source',
        'quote',
      ]);
    }
  });

  it('orders by orderby in the direction given by sort', async () => {
    const orders: [string, SortKey][] = [
      ['orderby=quote_length&sort=desc', { field: 'quote_length', direction: 'desc' }],
      ['orderby=publish_date', { field: 'publish_date', direction: 'asc' }],
      ['orderby=work&sort=DESC', { field: 'work', direction: 'desc' }],
      ['orderby=genre&sort=asc', { field: 'genre', direction: 'asc' }],
      ['orderby=author&sort=desc', { field: 'author', direction: 'desc' }],
    ];
    for (const [query, key] of orders) {
      const body = await v1(`genre=gothic&genre=tragedy&${query}&limit=100`);
      expect(
        body.data.map((q) => q.id),
        query,
      ).toEqual(expected({ genre: ['gothic', 'tragedy'] }, [key]).map((q) => q.id));
    }
  });

  it('pages, and answers 404 past the last page', async () => {
    const body = await v1('genre=lyric&limit=2&page=2&orderby=publish_date');
    expect(body.data.map((q) => q.id)).toEqual([12, 33]);
    expect(body.pagination).toEqual({ page: 2, limit: 2, total_pages: 3, total_quotes: 5 });
    const past = await get(app, '/api/v1/quotes?genre=lyric&limit=2&page=4');
    expect(past.statusCode).toBe(404);
    expect(errorOf(past).details).toBe(
      'page 4 is past the last page; the last page is 3 (5 quotes, 2 per page)',
    );
  });

  it('answers 404 when no quote has the genre', async () => {
    const response = await get(app, '/api/v1/quotes?genre=cyberpunk');
    expect(response.statusCode).toBe(404);
    expect(errorOf(response)).toEqual({
      code: 404,
      error: 'not_found',
      details: 'No quote matches the given filters',
    });
  });

  it('requires genre and rejects every parameter it does not define', async () => {
    const cases: [string, RegExp][] = [
      ['', /^genre is required on \/api\/v1\/quotes/],
      ['limit=5', /^genre is required/],
      ['genre=', /^genre must not be empty/],
      [
        'genre=lyric&author=x',
        /^author is not accepted on \/api\/v1\/quotes; \/api\/v1\/quotes accepts genre, page, limit, orderby, sort$/,
      ],
      ['genre=lyric&order=desc', /^order is not accepted on \/api\/v1\/quotes/],
      ['genre=lyric&fields=id', /^fields is not accepted/],
      [
        'genre=lyric&foo=1',
        /^unknown parameter 'foo'; \/api\/v1\/quotes accepts genre, page, limit, orderby, sort$/,
      ],
      [
        'genre=lyric&orderby=id',
        /^orderby must be one of author, work, genre, publish_date, quote_length, got 'id'$/,
      ],
      ['genre=lyric&sort=author', /^sort must be asc or desc, got 'author'$/],
      ['genre=lyric&limit=101', /^limit must be an integer from 1 to 100, got '101'$/],
      ['genre=lyric&page=0', /^page must be an integer ≥ 1, got '0'$/],
      [
        'genre=lyric&sort=asc&sort=desc',
        /^sort must be given at most once, got 2 values; expected asc or desc$/,
      ],
      ['genre=lyric&page=1&page=1', /^page must be given at most once/],
      ['genre=lyric&orderby=work&orderby=author', /^orderby must be given at most once/],
    ];
    for (const [query, details] of cases) {
      const response = await get(app, `/api/v1/quotes?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(errorOf(response).details, query).toMatch(details);
    }
  });

  it('carries an ETag and Cache-Control like the list', async () => {
    const response = await get(app, '/api/v1/quotes?genre=lyric');
    expect(response.headers['cache-control']).toBe('private, max-age=60');
    const again = await get(app, '/api/v1/quotes?genre=LYRIC&orderby=author&sort=asc', {
      'if-none-match': String(response.headers.etag),
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });
});
