import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import {
  listKey,
  MAX_PAGE,
  MAX_QUERY_LENGTH,
  parseIdQuery,
  parseListQuery,
  parseRandomQuery,
  parseV1Query,
  readQuery,
} from './query.ts';

/** The 400 details a parser throws for a query string. */
function rejection(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).statusCode).toBe(400);
    expect((error as ApiError).error).toBe('bad_request');
    return (error as ApiError).details;
  }
  throw new Error('expected a 400');
}

const list = (qs: string) => parseListQuery(readQuery(`/quotes?${qs}`));

describe('readQuery', () => {
  it('decodes + and %20 as spaces and %2B as a literal plus, keeping arrival order', () => {
    const q = readQuery('/quotes?author=Jane+Austen&work=Pride%20and%20Prejudice&genre=a%2Bb&author=x');
    expect([...q.entries()]).toEqual([
      ['author', ['Jane Austen', 'x']],
      ['work', ['Pride and Prejudice']],
      ['genre', ['a+b']],
    ]);
  });

  it('reads nothing from a URL without a query, and skips empty segments', () => {
    expect(readQuery('/quotes').size).toBe(0);
    expect(readQuery('/quotes?').size).toBe(0);
    expect([...readQuery('/quotes?&&limit=2&').entries()]).toEqual([['limit', ['2']]]);
  });

  it('rejects malformed percent-encoding, naming the parameter', () => {
    expect(rejection(() => readQuery('/quotes?author=%E0%A4%A'))).toMatch(
      /^author has invalid percent-encoding/,
    );
    expect(rejection(() => readQuery('/quotes?author=100%'))).toMatch(/^author has invalid percent-encoding/);
    // An encoded lone surrogate is not UTF-8.
    expect(rejection(() => readQuery('/quotes?work=%ED%A0%80'))).toMatch(/^work has invalid/);
    expect(rejection(() => readQuery('/quotes?%ZZ=1'))).toMatch(
      /parameter name '%ZZ' has invalid percent-encoding/,
    );
  });

  it('rejects a parameter without a name and an oversized query string', () => {
    expect(rejection(() => readQuery('/quotes?=5'))).toMatch(/needs a name/);
    const long = `/quotes?author=${'a'.repeat(MAX_QUERY_LENGTH)}`;
    expect(rejection(() => readQuery(long))).toBe(
      `the query string must be at most ${MAX_QUERY_LENGTH} characters, got ${MAX_QUERY_LENGTH + 7}`,
    );
  });

  it('stores prototype-polluting names as plain keys', () => {
    const q = readQuery('/quotes?__proto__=1&constructor=2');
    expect(q.get('__proto__')).toEqual(['1']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(rejection(() => parseListQuery(q))).toMatch(
      /^unknown parameter '__proto__'; \/quotes accepts author, /,
    );
  });
});

describe('parseListQuery', () => {
  it('gives the contract defaults: page 1 of 5 by id ascending, all fields', () => {
    expect(list('')).toEqual({ filters: {}, sort: [], page: 1, limit: 5, fields: null });
  });

  it('keeps sort keys in order and pairs several orders by position', () => {
    expect(list('sort=author,publish_date&order=desc,asc').sort).toEqual([
      { field: 'author', direction: 'desc' },
      { field: 'publish_date', direction: 'asc' },
    ]);
    expect(list('sort=work&sort=id&order=ASC&order=Desc').sort).toEqual([
      { field: 'work', direction: 'asc' },
      { field: 'id', direction: 'desc' },
    ]);
  });

  it('applies one order to every key, and to the default id key', () => {
    expect(list('sort=genre,quote_length&order=DESC').sort).toEqual([
      { field: 'genre', direction: 'desc' },
      { field: 'quote_length', direction: 'desc' },
    ]);
    expect(list('order=desc').sort).toEqual([{ field: 'id', direction: 'desc' }]);
  });

  it('drops keys that cannot change the order (after id, repeated, a final id asc)', () => {
    expect(list('sort=author,id,work').sort).toEqual([{ field: 'author', direction: 'asc' }]);
    expect(list('sort=author,author&order=asc,desc').sort).toEqual([{ field: 'author', direction: 'asc' }]);
    expect(list('sort=id').sort).toEqual([]);
  });

  it('rejects an order count that matches neither one nor the number of sort keys', () => {
    expect(rejection(() => list('sort=author,work,id&order=asc,desc'))).toBe(
      'order has 2 values but sort has 3 keys; give one order for all keys or exactly one per sort key',
    );
    expect(rejection(() => list('order=asc,desc'))).toMatch(
      /^order has 2 values but sort has 1 key \(id, the default\)/,
    );
  });

  it('rejects unknown sort keys and orders, and empty items, listing what is allowed', () => {
    expect(rejection(() => list('sort=title'))).toBe(
      "sort does not accept 'title'; allowed: id, author, author_id, work, work_id, category, genre, publish_date, quote_length",
    );
    expect(rejection(() => list('sort=Author'))).toMatch(/^sort does not accept 'Author'/);
    expect(rejection(() => list('sort=author,'))).toMatch(
      /^sort has an empty item in 'author,'; expected one or more of id/,
    );
    expect(rejection(() => list('order=up'))).toBe("order must be asc or desc, got 'up'");
  });

  it('checks page and limit as integers in range', () => {
    expect(list('page=3&limit=100')).toMatchObject({ page: 3, limit: 100 });
    expect(rejection(() => list('limit=ten'))).toBe("limit must be an integer from 1 to 100, got 'ten'");
    for (const bad of ['0', '101', '-1', '1.5', ' 5', '1e2']) {
      expect(rejection(() => list(`limit=${encodeURIComponent(bad)}`))).toMatch(
        /^limit must be an integer from 1 to 100, got /,
      );
    }
    expect(rejection(() => list('page=0'))).toBe("page must be an integer ≥ 1, got '0'");
    for (const bad of ['-1', '1.0', 'two', '00']) {
      expect(rejection(() => list(`page=${bad}`))).toMatch(/^page must be an integer ≥ 1, got /);
    }
    // A leading zero is refused (one spelling per number); the message says why.
    expect(rejection(() => list('limit=05'))).toBe(
      "limit must be an integer from 1 to 100 (written without leading zeros), got '05'",
    );
    expect(rejection(() => list('page=01'))).toBe(
      "page must be an integer ≥ 1 (written without leading zeros), got '01'",
    );
    expect(rejection(() => list('author_id=007'))).toBe(
      "author_id must be an integer ≥ 1 (written without leading zeros), got '007'",
    );
    // The contract bounds page only from below: huge pages are past the last page (a 404 later).
    expect(list('page=1000000001').page).toBe(MAX_PAGE + 1);
    expect(list('page=99999999999999999999').page).toBe(MAX_PAGE + 1);
  });

  it('rejects page, limit and fields given twice, naming the parameter', () => {
    expect(rejection(() => list('page=1&page=2'))).toBe(
      'page must be given at most once, got 2 values; expected an integer ≥ 1',
    );
    expect(rejection(() => list('limit=1&limit=1'))).toMatch(/^limit must be given at most once/);
    expect(rejection(() => list('fields=id&fields=author'))).toMatch(/^fields must be given at most once/);
  });

  it('rejects an empty value of any parameter', () => {
    for (const name of [
      'author',
      'author_id',
      'work_like',
      'genre',
      'sort',
      'order',
      'page',
      'limit',
      'fields',
    ]) {
      expect(rejection(() => list(`${name}=`))).toMatch(new RegExp(`^${name} must not be empty; expected `));
      expect(rejection(() => list(name))).toMatch(new RegExp(`^${name} must not be empty`));
    }
  });

  it('bounds the value of every parameter at 200 characters, not only filter values', () => {
    const fields200 = `${'id,'.repeat(66)}id`;
    expect(fields200).toHaveLength(200);
    expect(list(`fields=${fields200}`).fields).toEqual(['id']);
    expect(list(`page=${'9'.repeat(200)}`).page).toBe(MAX_PAGE + 1);
    const tooLong: [string, string][] = [
      ['fields', `${fields200},`],
      ['sort', `${'id,'.repeat(66)}idx`],
      ['order', `${'asc,'.repeat(50)}a`],
      ['page', '9'.repeat(201)],
      ['limit', '1'.repeat(201)],
    ];
    for (const [name, value] of tooLong) {
      expect(value).toHaveLength(201);
      expect(rejection(() => list(`${name}=${value}`))).toBe(
        `${name} must be at most 200 characters, got 201`,
      );
    }
    // Characters are code points: 200 astral letters are 400 UTF-16 units but within the bound.
    expect(rejection(() => list(`sort=${encodeURIComponent('𝔄'.repeat(200))}`))).toMatch(
      /^sort does not accept/,
    );
    expect(rejection(() => parseIdQuery('1', readQuery(`/quotes/1?fields=${fields200},`)))).toBe(
      'fields must be at most 200 characters, got 201',
    );
    expect(rejection(() => parseRandomQuery(readQuery(`/quotes/random?fields=${fields200},`)))).toBe(
      'fields must be at most 200 characters, got 201',
    );
    expect(
      rejection(() => parseV1Query(readQuery(`/api/v1/quotes?genre=a&orderby=${'a'.repeat(201)}`))),
    ).toBe('orderby must be at most 200 characters, got 201');
  });

  it('projects fields in Quote order without duplicates, rejecting unknown names and empty items', () => {
    expect(list('fields=quote,id,author,id').fields).toEqual(['id', 'author', 'quote']);
    expect(rejection(() => list('fields=id,title'))).toBe(
      "fields does not accept 'title'; allowed: id, author, author_id, work, work_id, category, genre, publish_date, quote_length, source, quote, language",
    );
    expect(rejection(() => list('fields=id,,author'))).toMatch(/^fields has an empty item in 'id,,author'/);
  });

  it('folds filters and keeps repeated values as alternatives', () => {
    expect(
      list('author=Charlotte+Bront%C3%AB&author=JANE%20%20AUSTEN&author_id=7&work_like=pride+prej').filters,
    ).toEqual({
      author: ['charlotte bronte', 'jane austen'],
      author_id: [7],
      work_like: [['pride', 'prej']],
    });
  });

  it('applies the port rules to filter values (ids, words, counts, lengths)', () => {
    expect(rejection(() => list('author_id=x'))).toBe("author_id must be an integer ≥ 1, got 'x'");
    expect(rejection(() => list('author_like=%21%21'))).toMatch(
      /^author_like must contain at least one letter or digit/,
    );
    expect(rejection(() => list(Array.from({ length: 21 }, (_, i) => `genre=g${i}`).join('&')))).toBe(
      'genre accepts at most 20 values, got 21',
    );
    expect(list(Array.from({ length: 20 }, (_, i) => `genre=g${i}`).join('&')).filters.genre).toHaveLength(
      20,
    );
    expect(rejection(() => list(`work=${'w'.repeat(201)}`))).toBe(
      'work must be at most 200 characters, got 201',
    );
    expect(list(`work=${'w'.repeat(200)}`).filters.work).toEqual(['w'.repeat(200)]);
    expect(rejection(() => list('author=a%00b'))).toBe('author must not contain NUL characters');
  });

  it('rejects parameters of other routes with a message saying where they belong', () => {
    expect(rejection(() => list('orderby=author'))).toMatch(
      /^orderby is not accepted on \/quotes; \/quotes accepts /,
    );
  });
});

describe('the other routes', () => {
  it('/quotes/random takes filters and fields only', () => {
    expect(parseRandomQuery(readQuery('/quotes/random?genre=lyric&fields=id'))).toEqual({
      filters: { genre: ['lyric'] },
      fields: ['id'],
    });
    for (const name of ['sort', 'order', 'page', 'limit']) {
      expect(rejection(() => parseRandomQuery(readQuery(`/quotes/random?${name}=1`)))).toBe(
        `${name} is not accepted on /quotes/random; /quotes/random accepts author, author_id, author_like, work, work_id, work_like, category, genre, language, min_length, max_length, published_from, published_to, q, count, exclude, fields`,
      );
    }
  });

  it('/quotes/{id} needs an integer id ≥ 1 and takes fields only', () => {
    expect(parseIdQuery('42', readQuery('/quotes/42?fields=quote'))).toEqual({ id: 42, fields: ['quote'] });
    for (const bad of ['0', 'abc', '-3', '1.0']) {
      expect(rejection(() => parseIdQuery(bad, new Map()))).toBe(`id must be an integer ≥ 1, got '${bad}'`);
    }
    expect(rejection(() => parseIdQuery('007', new Map()))).toBe(
      "id must be an integer ≥ 1 (written without leading zeros), got '007'",
    );
    // A valid id that no quote can have (beyond the safe integers the indexer accepts): no 400.
    expect(parseIdQuery('99999999999999999999', new Map())).toEqual({ id: null, fields: null });
    expect(rejection(() => parseIdQuery('1', readQuery('/quotes/1?author=x')))).toMatch(
      /^author is not accepted on \/quotes\/\{id\}; \/quotes\/\{id\} accepts fields$/,
    );
  });

  it('/api/v1/quotes requires genre and reads orderby and sort as a direction', () => {
    expect(parseV1Query(readQuery('/api/v1/quotes?genre=Lyric'))).toEqual({
      filters: { genre: ['lyric'] },
      sort: [{ field: 'author', direction: 'asc' }],
      page: 1,
      limit: 10,
      fields: ['id', 'author', 'work', 'genre', 'publish_date', 'quote_length', 'source', 'quote'],
    });
    expect(
      parseV1Query(readQuery('/api/v1/quotes?genre=a&orderby=quote_length&sort=DESC&page=2&limit=3')),
    ).toMatchObject({ sort: [{ field: 'quote_length', direction: 'desc' }], page: 2, limit: 3 });
    expect(rejection(() => parseV1Query(readQuery('/api/v1/quotes')))).toMatch(/^genre is required/);
    expect(rejection(() => parseV1Query(readQuery('/api/v1/quotes?genre=')))).toMatch(
      /^genre must not be empty/,
    );
    expect(rejection(() => parseV1Query(readQuery('/api/v1/quotes?genre=a&orderby=id')))).toBe(
      "orderby must be one of author, work, genre, publish_date, quote_length, got 'id'",
    );
    expect(rejection(() => parseV1Query(readQuery('/api/v1/quotes?genre=a&sort=author')))).toBe(
      "sort must be asc or desc, got 'author'",
    );
    expect(rejection(() => parseV1Query(readQuery('/api/v1/quotes?genre=a&fields=id')))).toMatch(
      /^fields is not accepted on \/api\/v1\/quotes; \/api\/v1\/quotes accepts genre, page, limit, orderby, sort$/,
    );
    expect(rejection(() => parseV1Query(readQuery('/api/v1/quotes?genre=a&sort=asc&sort=desc')))).toMatch(
      /^sort must be given at most once/,
    );
  });
});

describe('listKey', () => {
  it('is equal for equivalent requests and differs when the result can differ', () => {
    const key = (qs: string) => listKey('quotes', list(qs));
    expect(key('author=Jane+Austen&author=bronte')).toBe(
      key('author=BRONT%C3%8B&author=jane%20austen&author=bronte'),
    );
    expect(key('author_like=jane+aus')).toBe(key('author_like=aus+jane'));
    expect(key('sort=author,id')).toBe(key('sort=author'));
    expect(key('fields=quote,id')).toBe(key('fields=id,quote,id'));
    expect(key('')).toBe(key('sort=id&order=asc&page=1&limit=5'));
    expect(key('sort=author,work')).not.toBe(key('sort=work,author'));
    expect(key('page=2')).not.toBe(key('page=3'));
    expect(key('author_id=7')).not.toBe(key('work_id=7'));
    expect(listKey('v1', list(''))).not.toBe(listKey('quotes', list('')));
  });
});
