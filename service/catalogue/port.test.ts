import { describe, expect, it } from 'vitest';
import { FIXTURE_QUOTES } from '../test-support/fixtures.ts';
import { compareQuotes, project } from '../test-support/reference.ts';
import {
  codePointLength,
  compareCodePoints,
  fold,
  MAX_FILTER_VALUES,
  MAX_VALUE_LENGTH,
  matches,
  NO_ID,
  normaliseFields,
  normaliseFilters,
  normaliseSort,
  QUOTE_FIELDS,
  QueryError,
  type Quote,
  type SortKey,
  totalPages,
  wordSet,
  words,
} from './port.ts';

const quote = (id: number): Quote => {
  const found = FIXTURE_QUOTES.find((q) => q.id === id);
  if (found === undefined) throw new Error(`no fixture quote ${id}`);
  return found;
};

describe('fold', () => {
  it.each([
    ['Brontë', 'bronte'],
    ['  Émile   ZOLA ', 'emile zola'],
    ['E\u0301mile', 'emile'],
    ['Søren', 'søren'],
    ['Tab\tand\nnewline', 'tab and newline'],
    ['J’accuse…!', 'j’accuse...!'],
    ['ﬁn', 'fin'],
    ['ÅNGSTRÖM', 'angstrom'],
    ['🌙 Moon', '🌙 moon'],
    ['\u0085Next\u0085\u00a0line\u3000', 'next line'],
    // U+FEFF is a format character, not Unicode White_Space (though JavaScript's trim() takes it).
    ['\ufeffBOM\ufeff', '\ufeffbom\ufeff'],
    ['\u200bZero\u2003width', '\u200bzero width'],
    [' \t ', ''],
  ])('folds %j to %j', (text, folded) => {
    expect(fold(text)).toBe(folded);
  });
});

describe('words', () => {
  it('splits the folded form into runs of letters and digits', () => {
    expect(words("Jean-Paul O'Neil")).toEqual(['jean', 'paul', 'o', 'neil']);
    expect(words('Poésie et vérité 1942')).toEqual(['poesie', 'et', 'verite', '1942']);
    expect(words('Either/Or')).toEqual(['either', 'or']);
    expect(words('e. e. cummings')).toEqual(['e', 'e', 'cummings']);
  });

  it('finds no word in punctuation, symbols or white space', () => {
    expect(words(" -'… 🌙 ")).toEqual([]);
  });

  it('keeps each word once in wordSet', () => {
    expect(wordSet('e. e. cummings')).toEqual(['e', 'cummings']);
  });
});

describe('code points', () => {
  it('compares by code point, not UTF-16 unit', () => {
    // U+FF5E (one unit, 0xFF5E) sorts before U+1F319 (two units starting 0xD83C) by code point,
    // but after it by UTF-16 unit.
    expect(compareCodePoints('\uff5e', '🌙')).toBeLessThan(0);
    expect('\uff5e' < '🌙').toBe(false);
    expect(compareCodePoints('søren', 'sylvia')).toBeGreaterThan(0);
    expect(compareCodePoints('jean racine', 'jean-paul')).toBeLessThan(0);
    expect(compareCodePoints('abc', 'abc')).toBe(0);
    expect(compareCodePoints('ab', 'abc')).toBeLessThan(0);
  });

  it('counts code points', () => {
    expect(codePointLength('I keep the moon 🌙 in a jar of 𝄞 songs.')).toBe(38);
    expect(codePointLength('E\u0301')).toBe(2);
    expect(codePointLength('')).toBe(0);
  });
});

describe('normaliseFilters', () => {
  it('folds, de-duplicates and splits values', () => {
    expect(
      normaliseFilters({
        author: ['Émile Zola', ' EMILE   zola', 'Jane Austen'],
        genre: ['Romance'],
        author_id: ['7', '7', '12'],
        author_like: ["O'Connor", 'jean-paul jean'],
      }),
    ).toEqual({
      author: ['emile zola', 'jane austen'],
      genre: ['romance'],
      author_id: [7, 12],
      author_like: [
        ['o', 'connor'],
        ['jean', 'paul'],
      ],
    });
  });

  it('leaves absent or empty filters out', () => {
    expect(normaliseFilters({ author: [], work: undefined })).toEqual({});
  });

  it.each([
    [{ author: [''] }, 'author'],
    [{ work: ['   '] }, 'work'],
    [{ author_id: ['0'] }, 'author_id'],
    [{ work_id: ['07'] }, 'work_id'],
    [{ work_id: ['1.5'] }, 'work_id'],
    [{ author_like: ["-'…"] }, 'author_like'],
    [{ genre: ['x'.repeat(MAX_VALUE_LENGTH + 1)] }, 'genre'],
    [{ category: Array.from({ length: MAX_FILTER_VALUES + 1 }, (_, i) => `c${i}`) }, 'category'],
  ])('rejects %j naming %s', (raw, parameter) => {
    let error: unknown;
    try {
      normaliseFilters(raw);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).parameter).toBe(parameter);
  });

  it('accepts the largest allowed value count and length', () => {
    const values = Array.from({ length: MAX_FILTER_VALUES }, (_, i) => `${i}`.padEnd(MAX_VALUE_LENGTH, 'x'));
    expect(normaliseFilters({ category: values }).category).toHaveLength(MAX_FILTER_VALUES);
  });
});

describe('id filter values', () => {
  it('parses decimal integers from 1 to the safe limit', () => {
    expect(normaliseFilters({ author_id: ['1'] }).author_id).toEqual([1]);
    expect(normaliseFilters({ work_id: ['9007199254740991'] }).work_id).toEqual([Number.MAX_SAFE_INTEGER]);
    expect(normaliseFilters({ work_id: ['9007199254740992'] }).work_id).toEqual([NO_ID]);
  });

  it.each(['0', '-1', '+1', '01', '1e3', ' 1', 'ten'])('rejects %j', (value) => {
    expect(() => normaliseFilters({ author_id: [value] })).toThrow(QueryError);
  });
});

describe('normaliseSort', () => {
  it('drops repeated fields and everything after id', () => {
    const keys: SortKey[] = [
      { field: 'author', direction: 'asc' },
      { field: 'author', direction: 'desc' },
      { field: 'id', direction: 'desc' },
      { field: 'work', direction: 'asc' },
    ];
    expect(normaliseSort(keys)).toEqual([
      { field: 'author', direction: 'asc' },
      { field: 'id', direction: 'desc' },
    ]);
  });
});

describe('normaliseFields and project', () => {
  it('orders fields as the contract lists them and drops duplicates', () => {
    expect(normaliseFields(['quote', 'id', 'genre', 'id'])).toEqual(['id', 'genre', 'quote']);
    expect(normaliseFields(null)).toBeNull();
  });

  it('projects a quote to exactly the requested fields', () => {
    const projected = project(quote(3), ['id', 'genre', 'quote_length']);
    expect(projected).toEqual({ id: 3, genre: ['gothic', 'romance', 'bildungsroman'], quote_length: 87 });
    expect(Object.keys(projected)).toEqual(['id', 'genre', 'quote_length']);
    expect(Object.keys(project(quote(3), null))).toEqual([...QUOTE_FIELDS]);
  });
});

describe('totalPages', () => {
  it('rounds up and is 0 without matches', () => {
    expect([totalPages(42, 5), totalPages(40, 5), totalPages(1, 100), totalPages(0, 5)]).toEqual([
      9, 8, 1, 0,
    ]);
  });
});

describe('compareQuotes', () => {
  const sorted = (ids: number[], sort: SortKey[]) =>
    ids
      .map(quote)
      .sort((a, b) => compareQuotes(a, b, sort))
      .map((q) => q.id);

  it('orders text by folded form and code point', () => {
    // bell hooks, Émile Zola, Emily Brontë, Sylvia Plath, Søren Kierkegaard
    expect(sorted([101, 45, 12, 301, 9], [{ field: 'author', direction: 'asc' }])).toEqual([
      301, 9, 12, 45, 101,
    ]);
  });

  it('orders genre by the first genre only', () => {
    // Emma (comedy, romance) before Jane Eyre (gothic, romance) before Pride and Prejudice (romance).
    expect(sorted([42, 3, 19], [{ field: 'genre', direction: 'asc' }])).toEqual([19, 3, 42]);
  });

  it('orders publish_date as a string and numbers as numbers', () => {
    expect(sorted([180, 14, 101], [{ field: 'publish_date', direction: 'asc' }])).toEqual([101, 14, 180]);
    // Lengths 42, 24 and 117: numeric order (as strings, '117' < '24' < '42').
    expect(sorted([1, 88, 42], [{ field: 'quote_length', direction: 'desc' }])).toEqual([42, 1, 88]);
  });

  it('breaks ties by the next key, then by id ascending whatever the direction', () => {
    const sort: SortKey[] = [
      { field: 'author', direction: 'desc' },
      { field: 'publish_date', direction: 'desc' },
    ];
    expect(sorted([130, 42, 7, 5, 19], sort)).toEqual([19, 5, 7, 42, 130]);
    expect(sorted([150, 97, 23], [{ field: 'category', direction: 'desc' }])).toEqual([23, 97, 150]);
  });
});

describe('matches', () => {
  it('ANDs filters and ORs values of one filter', () => {
    const filters = normaliseFilters({ author_like: ['bron', 'aust'], category: ['poetry'] });
    expect(FIXTURE_QUOTES.filter((q) => matches(q, filters)).map((q) => q.id)).toEqual([12]);
  });

  it('matches word prefixes in any order, never inside a word', () => {
    const like = (value: string) =>
      FIXTURE_QUOTES.filter((q) => matches(q, normaliseFilters({ author_like: [value] })))
        .map((q) => q.author_id)
        .filter((id, i, all) => all.indexOf(id) === i);
    expect(like('paul jean')).toEqual([31]);
    expect(like('usten')).toEqual([]);
    expect(like('o conn')).toEqual([23]);
  });
});

describe('filter value rules at the edges', () => {
  it('counts a value length in code points, as the indexer does', () => {
    const astral = '𝔄'.repeat(MAX_VALUE_LENGTH);
    expect(normaliseFilters({ author: [astral] }).author).toEqual([fold(astral)]);
    expect(() => normaliseFilters({ author: [`${astral}x`] })).toThrow(/at most 200 characters, got 201/);
  });

  it('accepts ids beyond the safe range as ids no quote has', () => {
    expect(normaliseFilters({ author_id: ['99999999999999999999', '7'] }).author_id).toEqual([NO_ID, 7]);
    expect(() => normaliseFilters({ work_id: ['0'] })).toThrow(QueryError);
    expect(() => normaliseFilters({ work_id: ['-3'] })).toThrow(/work_id must be an integer ≥ 1, got '-3'/);
  });
});
