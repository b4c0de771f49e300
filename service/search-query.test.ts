/**
 * `q` at the HTTP edge (parsing, bounds, ETag keys) and the encodings search.ts gives the
 * engines. What the engines answer is search.suite.ts.
 */
import { describe, expect, it } from 'vitest';
import { engineToken, MAX_QUERY_WORD_LENGTH, searchKey, searchToken } from './catalogue/search.ts';
import { ApiError } from './errors.ts';
import { listKey, parseIdQuery, parseListQuery, parseRandomQuery, parseV1Query, readQuery } from './query.ts';

function rejection(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    if (error instanceof ApiError && error.statusCode === 400) return error.details;
    throw error;
  }
  throw new Error('expected a 400');
}

const list = (url: string) => parseListQuery(readQuery(url));

describe('q on /quotes and /quotes/random', () => {
  it('reads the folded words of q, in order, and ranks when no order is asked for', () => {
    const query = list("/quotes?q=L%E2%80%99%C3%89t%C3%A9+d'%C3%89MILE++jusqu%E2%80%91au");
    expect(query.filters.q).toEqual(['l', 'ete', 'd', 'emile', 'jusqu', 'au']);
    expect(query.ranked).toBe(true);
    expect(list('/quotes?q=pride&sort=author').ranked).toBeUndefined();
    expect(list('/quotes?q=pride&order=desc').ranked).toBeUndefined();
    expect(list('/quotes?author=x').ranked).toBeUndefined();
    expect(parseRandomQuery(readQuery('/quotes/random?q=%E6%88%91%E6%80%9D&genre=x')).filters).toEqual({
      genre: ['x'],
      q: ['我思'],
    });
  });

  it.each([
    ['q=', /^q must not be empty/],
    ['q=+++', /^q must contain at least one letter or digit, got ' {3}'; expected words to search for/],
    ['q=%E2%80%94%21%3F', /^q must contain at least one letter or digit, got '—!\?'/],
    ['q=a+b+c+d+e+f+g+h+i+j+k', /^q accepts at most 10 words, got 11/],
    [
      `q=${'x'.repeat(MAX_QUERY_WORD_LENGTH + 1)}`,
      /^each word of q must be at most 64 characters, got one of 65/,
    ],
    [`q=${'a '.repeat(101)}`, /^q must be at most 200 characters, got 202/],
    ['q=a&q=b', /^q must be given at most once, got 2 values/],
  ])('%s → 400', (params, message) => {
    expect(rejection(() => list(`/quotes?${params}`))).toMatch(message);
    expect(rejection(() => parseRandomQuery(readQuery(`/quotes/random?${params}`)))).toMatch(message);
  });

  it('is not accepted on /quotes/{id} or /api/v1/quotes', () => {
    expect(rejection(() => parseIdQuery('1', readQuery('/quotes/1?q=a')))).toMatch(
      /^q is not accepted on \/quotes\/\{id\}/,
    );
    expect(rejection(() => parseV1Query(readQuery('/api/v1/quotes?genre=x&q=a')))).toMatch(
      /^q is not accepted on \/api\/v1\/quotes/,
    );
  });

  it('changes the ETag key with its words, their order and the relevance order, not with case or accents', () => {
    const key = (url: string) => listKey('quotes', list(url));
    expect(key('/quotes?q=Emile+Zola')).toBe(key('/quotes?q=%C3%A9mile++ZOLA'));
    expect(key('/quotes?q=emile+zola')).not.toBe(key('/quotes?q=zola+emile'));
    expect(key('/quotes?q=emile')).not.toBe(key('/quotes'));
    expect(key('/quotes?q=emile')).not.toBe(key('/quotes?q=emile&sort=id'));
  });
});

describe('search tokens', () => {
  it('write each UTF-8 byte as two letters from a to p', () => {
    expect(searchToken('a')).toBe('gb');
    expect(searchToken('é')).toBe('mdkj');
    // U+6211 is E6 88 91 in UTF-8.
    expect(searchToken('我')).toBe('ogiijb');
  });

  it('keep prefixes both ways and never collide', () => {
    const words = ['ab', 'abc', 'é', 'e', 'ø', 'o', '我', '我思', '1', '10', 'straße', 'strasse'];
    for (const w of words) {
      for (const p of words) {
        expect(searchToken(w).startsWith(searchToken(p))).toBe(w.startsWith(p));
      }
    }
    expect(new Set(words.map(searchToken)).size).toBe(words.length);
  });

  it('stay under the engine word limit, long words as a digest that no short word can equal', () => {
    const long = '我'.repeat(50);
    expect(engineToken('我'.repeat(41))).toBe(searchToken('我'.repeat(41)));
    expect(engineToken(long)).toMatch(/^q[a-p]{64}$/);
    expect(engineToken(long)).not.toBe(engineToken(`${long}我`));
  });

  it('filter long words by their first 64 characters and a digest', () => {
    const word = `${'x'.repeat(64)}yz`;
    expect(searchKey('x'.repeat(64))).toBe('x'.repeat(64));
    expect(searchKey(word)).toMatch(new RegExp(`^${'x'.repeat(64)}~[0-9a-f]{64}$`));
    expect(searchKey(word).startsWith('x'.repeat(64))).toBe(true);
  });
});
