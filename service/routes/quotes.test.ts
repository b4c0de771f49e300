/** `GET /quotes` over the real SQLite backend: every row of docs/api.md#listing-quotes. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUOTE_FIELDS, type Quote, type RawFilters, type SortKey } from '../catalogue/port.ts';
import { openSqliteCatalogue } from '../catalogue/sqlite/catalogue.ts';
import {
  buildFixtureCatalogue,
  errorOf,
  expected,
  type FixtureCatalogue,
  fixtureApp,
  get,
} from '../test-app.ts';
import { FIXTURE_QUOTES } from '../test-support/fixtures.ts';

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

interface ListBody {
  items: Partial<Quote>[];
  pagination: { page: number; limit: number; total_pages: number; total_quotes: number };
}

async function list(query: string): Promise<ListBody> {
  const response = await get(app, `/quotes?${query}`);
  expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  return response.json() as ListBody;
}

const ids = (body: ListBody) => body.items.map((q) => q.id as number);

/** Every page of a query, concatenated. */
async function allIds(query: string): Promise<number[]> {
  const out: number[] = [];
  for (let page = 1; ; page++) {
    const body = await list(`${query}&limit=100&page=${page}`);
    out.push(...ids(body));
    if (page >= body.pagination.total_pages) return out;
  }
}

/** The contract's answer: ids of the fixture quotes matching, in order. */
const expectedIds = (raw: RawFilters, sort: SortKey[] = []) => expected(raw, sort).map((q) => q.id);

async function notFound(query: string): Promise<string> {
  const response = await get(app, `/quotes?${query}`);
  expect(response.statusCode, query).toBe(404);
  const body = errorOf(response);
  expect(body.error).toBe('not_found');
  return body.details;
}

describe('GET /quotes defaults', () => {
  it('returns page 1 of 5 full quotes sorted by id ascending', async () => {
    const body = await list('');
    expect(ids(body)).toEqual([1, 2, 3, 5, 6]);
    const byId = new Map(FIXTURE_QUOTES.map((q) => [q.id, q]));
    expect(body.items).toEqual([1, 2, 3, 5, 6].map((id) => byId.get(id)));
    for (const item of body.items) expect(Object.keys(item)).toEqual([...QUOTE_FIELDS]);
    expect(body.pagination).toEqual({
      page: 1,
      limit: 5,
      total_pages: Math.ceil(FIXTURE_QUOTES.length / 5),
      total_quotes: FIXTURE_QUOTES.length,
    });
  });

  it('with no query string at all, the same as with an empty one', async () => {
    const response = await get(app, '/quotes');
    expect(response.json()).toEqual(await list(''));
  });
});

describe('filters', () => {
  it('author matches the folded name: case, accents and spacing ignored', async () => {
    expect(await allIds('author=Jane+Austen')).toEqual([5, 7, 19, 42, 88, 130]);
    expect(await allIds('author=CHARLOTTE%20BRONTE')).toEqual([3, 56, 64, 211]);
    expect(await allIds('author=charlotte+bront%C3%AB')).toEqual([3, 56, 64, 211]);
    // The source has two spaces in "Oscar  Wilde".
    expect(await allIds('author=Oscar+Wilde')).toEqual([6, 17, 74, 90, 110]);
    // Decomposed "É" in the source, precomposed in the request.
    expect(await allIds('author=Paul+%C3%89luard')).toEqual([33]);
    // ø has no decomposition: "soren" is not "søren".
    expect(await notFound('author=Soren+Kierkegaard')).toBe('No quote matches the given filters');
    expect(await allIds('author=S%C3%B8ren+kierkegaard')).toEqual([14, 101, 180]);
  });

  it('author_like matches the beginnings of words, in any order', async () => {
    expect(await allIds('author_like=aust')).toEqual([5, 7, 19, 42, 88, 130]);
    expect(await allIds('author_like=jane+aus')).toEqual([5, 7, 19, 42, 88, 130]);
    expect(await allIds('author_like=aus+jane')).toEqual([5, 7, 19, 42, 88, 130]);
    expect(await allIds('author_like=o%27conn')).toEqual(expectedIds({ author_like: ["o'conn"] }));
    expect(await allIds('author_like=bront')).toEqual([3, 12, 23, 56, 64, 97, 150, 211]);
  });

  it('author_like=usten finds nothing: not the beginning of a word', async () => {
    expect(await notFound('author_like=usten')).toBe('No quote matches the given filters');
  });

  it('work and work_like match titles', async () => {
    expect(await allIds('work_like=pride+prej')).toEqual([5, 7, 42, 130]);
    expect(await allIds('work=pride+and+prejudice')).toEqual([5, 7, 42, 130]);
    // One title, two authors.
    expect(await allIds('work=Poems')).toEqual([12, 81]);
  });

  it('ids, category and genre filter exactly; genre matches any element', async () => {
    expect(await allIds('author_id=7')).toEqual([5, 7, 19, 42, 88, 130]);
    expect(await allIds('work_id=301')).toEqual([23, 97, 150]);
    expect(await allIds('category=POETRY')).toEqual(expectedIds({ category: ['poetry'] }));
    expect(await allIds('category=POETRY')).toContain(28);
    expect(await allIds('genre=existentialism')).toEqual([2, 14, 99, 120]);
    expect(await allIds('genre=romance')).toEqual(expectedIds({ genre: ['romance'] }));
  });

  it('repeating one filter matches any of its values (OR)', async () => {
    expect(await allIds('author=Sylvia+Plath&author=bell+hooks')).toEqual([45, 200, 301]);
    expect(await allIds('genre=lyric&genre=sonnet&genre=nothing-like-this')).toEqual(
      expectedIds({ genre: ['lyric', 'sonnet', 'nothing-like-this'] }),
    );
    expect(await allIds('author_id=8&author_id=61')).toEqual([45, 200, 301]);
  });

  it('different filters must all hold (AND)', async () => {
    expect(await allIds('author=jane+austen&genre=comedy')).toEqual([19]);
    expect(await allIds('category=fiction&genre=gothic&author_like=emily')).toEqual([23, 97, 150]);
    expect(await notFound('author=jane+austen&category=poetry')).toBe('No quote matches the given filters');
  });
});

describe('sorting', () => {
  const cases: [string, SortKey[]][] = [
    ['sort=author', [{ field: 'author', direction: 'asc' }]],
    ['sort=author&order=DESC', [{ field: 'author', direction: 'desc' }]],
    [
      'sort=author,publish_date&order=desc,asc',
      [
        { field: 'author', direction: 'desc' },
        { field: 'publish_date', direction: 'asc' },
      ],
    ],
    [
      'sort=category&sort=quote_length&order=asc&order=desc',
      [
        { field: 'category', direction: 'asc' },
        { field: 'quote_length', direction: 'desc' },
      ],
    ],
    ['sort=genre', [{ field: 'genre', direction: 'asc' }]],
    ['sort=publish_date', [{ field: 'publish_date', direction: 'asc' }]],
    [
      'sort=work_id,author_id&order=desc',
      [
        { field: 'work_id', direction: 'desc' },
        { field: 'author_id', direction: 'desc' },
      ],
    ],
    ['sort=id&order=desc', [{ field: 'id', direction: 'desc' }]],
  ];

  for (const [query, sort] of cases) {
    it(`${query} orders as the contract's comparator, id breaking ties`, async () => {
      expect(await allIds(query)).toEqual(expectedIds({}, sort));
    });
  }

  it('puts the primary key first: author then date differs from date then author', async () => {
    const byAuthor = await list('author_like=bront&sort=author,publish_date&limit=4');
    expect(ids(byAuthor)).toEqual([56, 211, 3, 64]);
    const byDate = await list('author_like=bront&sort=publish_date,author&limit=4');
    expect(ids(byDate)).toEqual([12, 56, 211, 3]);
  });

  it('sorts a bare year before the full dates of that year, and ties by id', async () => {
    expect(await allIds('work=pride+and+prejudice&sort=publish_date')).toEqual([130, 5, 7, 42]);
    expect(await allIds('work=pride+and+prejudice&sort=publish_date&order=desc')).toEqual([5, 7, 42, 130]);
  });

  it('rejects an order count that is neither one nor one per key', async () => {
    const response = await get(app, '/quotes?sort=author,work&order=asc,desc,asc');
    expect(response.statusCode).toBe(400);
    expect(errorOf(response).details).toBe(
      'order has 3 values but sort has 2 keys; give one order for all keys or exactly one per sort key',
    );
  });
});

describe('pages and fields', () => {
  it('pages never overlap or skip, and the last page holds the remainder', async () => {
    const total = FIXTURE_QUOTES.length;
    const pages = Math.ceil(total / 10);
    const seen: number[] = [];
    for (let page = 1; page <= pages; page++) {
      const body = await list(`sort=author&limit=10&page=${page}`);
      expect(body.pagination).toEqual({ page, limit: 10, total_pages: pages, total_quotes: total });
      seen.push(...ids(body));
    }
    expect(seen).toEqual(expectedIds({}, [{ field: 'author', direction: 'asc' }]));
    expect((await list(`limit=10&page=${pages}`)).items).toHaveLength(total - (pages - 1) * 10);
  });

  it('a page past the last is a 404 naming the last page', async () => {
    const pages = Math.ceil(FIXTURE_QUOTES.length / 10);
    expect(await notFound(`limit=10&page=${pages + 1}`)).toBe(
      `page ${pages + 1} is past the last page; the last page is ${pages} (${FIXTURE_QUOTES.length} quotes, 10 per page)`,
    );
    expect(await notFound('author=jane+austen&page=3')).toBe(
      'page 3 is past the last page; the last page is 2 (6 quotes, 5 per page)',
    );
    expect(await notFound('page=1000000000')).toMatch(
      /^page 1000000000 is past the last page; the last page is /,
    );
    // The contract bounds page only from below.
    expect(await notFound('page=99999999999999999999')).toMatch(
      /^page above 1000000000 is past the last page; the last page is /,
    );
  });

  it('limit takes 1 to 100', async () => {
    expect(ids(await list('limit=1'))).toEqual([1]);
    expect((await list('limit=100')).items).toHaveLength(Math.min(100, FIXTURE_QUOTES.length));
  });

  it('fields projects every item to exactly the requested fields, in Quote order', async () => {
    const body = await list('fields=quote,id,author,id&limit=3');
    expect(body.items).toEqual(
      expected({})
        .slice(0, 3)
        .map((q) => ({ id: q.id, author: q.author, quote: q.quote })),
    );
    for (const item of body.items) expect(Object.keys(item)).toEqual(['id', 'author', 'quote']);
    const genres = await list('fields=genre&author_id=1');
    expect(genres.items).toEqual(
      expected({ author_id: ['1'] })
        .slice(0, 5)
        .map((q) => ({ genre: q.genre })),
    );
  });

  it('fields combines with filters, sort and pages', async () => {
    const body = await list(
      'author=jane+austen&sort=quote_length&order=desc&fields=id,quote_length&limit=2&page=2',
    );
    expect(body).toEqual({
      items: [
        { id: 19, quote_length: 89 },
        { id: 130, quote_length: 84 },
      ],
      pagination: { page: 2, limit: 2, total_pages: 3, total_quotes: 6 },
    });
  });
});

describe('invalid parameters', () => {
  const cases: [string, string | RegExp][] = [
    ['limit=ten', "limit must be an integer from 1 to 100, got 'ten'"],
    ['limit=0', "limit must be an integer from 1 to 100, got '0'"],
    ['limit=101', "limit must be an integer from 1 to 100, got '101'"],
    ['page=0', "page must be an integer ≥ 1, got '0'"],
    ['page=first', "page must be an integer ≥ 1, got 'first'"],
    [
      'title=x',
      /^unknown parameter 'title'; \/quotes accepts author, author_id, author_like, work, work_id, work_like, category, genre, language, min_length, max_length, published_from, published_to, q, sort, order, page, limit, fields$/,
    ],
    ['Author=x', /^unknown parameter 'Author'/],
    ['constructor=x', /^unknown parameter 'constructor'/],
    ['__proto__=x', /^unknown parameter '__proto__'/],
    ['sort=rating', /^sort does not accept 'rating'; allowed: id, author/],
    ['sort=author,', /^sort has an empty item in 'author,'/],
    ['order=sideways', "order must be asc or desc, got 'sideways'"],
    ['fields=id,,author', /^fields has an empty item in 'id,,author'/],
    ['fields=isbn', /^fields does not accept 'isbn'; allowed: id, author/],
    ['page=1&page=2', /^page must be given at most once, got 2 values/],
    ['limit=5&limit=5', /^limit must be given at most once/],
    ['fields=id&fields=id', /^fields must be given at most once/],
    ['author=', /^author must not be empty; expected a text of 1 to 200 characters$/],
    ['genre', /^genre must not be empty/],
    ['author_id=0', "author_id must be an integer ≥ 1, got '0'"],
    ['work_id=abc', "work_id must be an integer ≥ 1, got 'abc'"],
    ['author_like=-', /^author_like must contain at least one letter or digit/],
    ['work=%20%20', /^work must hold more than white space and combining marks; expected a text/],
    ['author=%CC%81', /^author must hold more than white space and combining marks; expected a text/],
    [`author=${'x'.repeat(201)}`, 'author must be at most 200 characters, got 201'],
    [
      Array.from({ length: 21 }, (_, i) => `author_id=${i + 1}`).join('&'),
      'author_id accepts at most 20 values, got 21',
    ],
    ['author=%E0%A4%A', /^author has invalid percent-encoding in '%E0%A4%A'/],
  ];
  for (const [query, details] of cases) {
    it(`${query.slice(0, 60)} → 400`, async () => {
      const response = await get(app, `/quotes?${query}`);
      expect(response.statusCode).toBe(400);
      expect(response.headers['cache-control']).toBe('no-store');
      const body = errorOf(response);
      expect(body.error).toBe('bad_request');
      if (typeof details === 'string') expect(body.details).toBe(details);
      else expect(body.details).toMatch(details);
    });
  }

  it('reports a parameter error before a data error (400 before 404)', async () => {
    const response = await get(app, '/quotes?author=nobody&limit=ten');
    expect(response.statusCode).toBe(400);
  });
});

describe('answers kept for requests that come back', () => {
  it('asks the catalogue for a request twice, and answers it from memory from then on', async () => {
    const real = openSqliteCatalogue({ path: catalogue.path });
    let reads = 0;
    // The real catalogue, its list reads counted.
    const counted = new Proxy(real, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (name === 'list' || name === 'listJson') reads++;
          return value.apply(target, args);
        };
      },
    });
    const counting = await fixtureApp(catalogue.path, {}, { catalogue: counted });
    try {
      const path = '/quotes?sort=author&limit=3';
      const bodies: string[] = [];
      const readsAfter: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await get(counting, path);
        expect(response.statusCode).toBe(200);
        bodies.push(response.body);
        // The answer is kept once the version is read again, after the response.
        await new Promise((resolve) => setImmediate(resolve));
        readsAfter.push(reads);
      }
      expect(readsAfter).toEqual([1, 2, 2, 2]);
      expect(new Set(bodies).size).toBe(1);
    } finally {
      await counting.close();
      await real.close();
    }
  });
});
