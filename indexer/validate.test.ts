import { describe, expect, it } from 'vitest';
import type { Quote } from '../service/catalogue/port.ts';
import { FIXTURE_QUOTES } from '../service/test-support/fixtures.ts';
import { type Problem, Validator } from './validate.ts';

/** A valid record as a data file holds it (no quote_length: the indexer computes it). */
function record(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 1,
    author: 'Jane Austen',
    author_id: 7,
    work: 'Pride and Prejudice',
    work_id: 70,
    category: 'fiction',
    genre: ['romance', 'satire'],
    publish_date: '1813-01-28',
    source: 'https://www.gutenberg.org/ebooks/1342',
    quote: 'It is a truth universally acknowledged.',
    language: 'en',
    ...overrides,
  };
}

/** Problems of one record checked on its own. */
function problemsOf(value: unknown): readonly Problem[] {
  const validator = new Validator();
  expect(validator.check(value, 1)).toBeNull();
  return validator.problems;
}

describe('a valid record', () => {
  it('becomes a complete quote in contract field order, with quote_length in code points', () => {
    const validator = new Validator();
    const quote = validator.check(record({ quote: 'I keep the moon 🌙 in a jar of 𝄞 songs.' }), 1);
    expect(quote).toStrictEqual({
      id: 1,
      author: 'Jane Austen',
      author_id: 7,
      work: 'Pride and Prejudice',
      work_id: 70,
      category: 'fiction',
      genre: ['romance', 'satire'],
      publish_date: '1813-01-28',
      // 38 code points; the emoji and the clef are two UTF-16 units each.
      quote_length: 38,
      source: 'https://www.gutenberg.org/ebooks/1342',
      quote: 'I keep the moon 🌙 in a jar of 𝄞 songs.',
      language: 'en',
    });
    expect(Object.keys(quote as Quote)).toEqual([
      'id',
      'author',
      'author_id',
      'work',
      'work_id',
      'category',
      'genre',
      'publish_date',
      'quote_length',
      'source',
      'quote',
      'language',
    ]);
    expect(validator.problemCount).toBe(0);
  });

  it('keeps labels whose folded form holds anything besides white space and marks', () => {
    const labels = { author: 'ø', work: '𝔄 \u0301', category: 'x\u0301', genre: '\u0301-' };
    expect(new Validator().check(record(labels), 1)).toMatchObject({ ...labels, genre: ['\u0301-'] });
  });

  it('turns a single-string genre into a one-element array', () => {
    expect(new Validator().check(record({ genre: 'gothic' }), 1)?.genre).toEqual(['gothic']);
  });

  it('ignores a given quote_length and recomputes it', () => {
    expect(new Validator().check(record({ quote: 'abc', quote_length: 999 }), 1)?.quote_length).toBe(3);
  });

  it('accepts every fixture quote of the behaviour suite', () => {
    const validator = new Validator();
    for (const [i, q] of FIXTURE_QUOTES.entries()) {
      expect(validator.check({ ...q, quote_length: undefined }, i + 1)).toEqual(q);
    }
    expect(validator.problems).toEqual([]);
  });

  it('accepts year, year-month and full dates, including 29 February of leap years', () => {
    const validator = new Validator();
    const dates = ['1813', '1843-12', '2000-02-29', '1600-02-29', '2024-02-29', '0001-01-01', '9999-12-31'];
    for (const [i, publish_date] of dates.entries()) {
      const q = validator.check(record({ id: i + 1, publish_date }), i + 1);
      expect(q?.publish_date).toBe(publish_date);
    }
    expect(validator.problems).toEqual([]);
  });

  it('accepts labels up to 1,000 code points, counting astral characters once', () => {
    // 1,000 astral characters are 2,000 UTF-16 units.
    const q = new Validator().check(record({ author: '𝄞'.repeat(1000), quote: 'q'.repeat(10_000) }), 1);
    expect(q?.author).toBe('𝄞'.repeat(1000));
    expect(q?.quote_length).toBe(10_000);
  });
});

describe('a broken record', () => {
  it.each([
    ['id', 'must be an integer ≥ 1, got 0', 0],
    ['id', 'must be an integer ≥ 1, got -3', -3],
    ['id', 'must be an integer ≥ 1, got 1.5', 1.5],
    ['id', 'must be an integer ≥ 1, got the string "12"', '12'],
    ['id', `must be an integer from 1 to 9007199254740991, got ${2 ** 53}`, 2 ** 53],
    ['author_id', 'must be an integer ≥ 1, got null', null],
    ['work_id', 'must be an integer ≥ 1, got true', true],
    ['author', 'must not be empty or only white space', ''],
    ['work', 'must not be empty or only white space', ' \t '],
    ['category', 'must be a string, got 42', 42],
    ['author', 'must be at most 1000 characters, got 1001', 'a'.repeat(1001)],
    ['genre', 'must hold at least one genre', []],
    ['genre', 'must be a string or an array of strings, got an object', { a: 1 }],
    ['genre', 'must hold at most 20 genres, got 21', Array.from({ length: 21 }, (_, i) => `g${i}`)],
    ['genre', 'must not be empty or only white space', ''],
    ['publish_date', 'must be YYYY, YYYY-MM or YYYY-MM-DD, got "1813-1-28"', '1813-1-28'],
    ['publish_date', 'must be YYYY, YYYY-MM or YYYY-MM-DD, got "18130128"', '18130128'],
    ['publish_date', 'must be YYYY, YYYY-MM or YYYY-MM-DD, got " 1813"', ' 1813'],
    ['publish_date', 'has no month 13: "1813-13"', '1813-13'],
    ['publish_date', 'is not a calendar date: "1900-02-29"', '1900-02-29'],
    ['publish_date', 'is not a calendar date: "2023-04-31"', '2023-04-31'],
    ['publish_date', 'is not a calendar date: "2023-04-00"', '2023-04-00'],
    ['publish_date', 'must be a string, got 1813', 1813],
    ['source', 'must be an absolute http or https URL, got "ftp://example.org/a"', 'ftp://example.org/a'],
    ['source', 'must be an absolute http or https URL, got "example.org/a"', 'example.org/a'],
    ['source', 'must be an absolute http or https URL, got "/ebooks/1342"', '/ebooks/1342'],
    ['source', 'must be an absolute http or https URL, got "https://"', 'https://'],
    ['source', 'must be an absolute http or https URL, got "javascript:alert(1)"', 'javascript:alert(1)'],
    [
      'source',
      'must not contain white space or control characters, got "https://exa mple.org"',
      'https://exa mple.org',
    ],
    [
      'source',
      'must not contain white space or control characters, got "https://example.org/\\n"',
      'https://example.org/\n',
    ],
    ['source', 'must be a URL string, got an array', ['https://example.org']],
    ['quote', 'must not be empty or only white space', ''],
    // JSON can spell half a surrogate pair (`"\ud800"`); no engine stores or answers it faithfully.
    ['quote', 'must be well-formed Unicode: code point 4 is a lone surrogate', 'abc\ud800 def'],
    ['author', 'must be well-formed Unicode: code point 1 is a lone surrogate', '\udc00Ann'],
    [
      'source',
      'must be well-formed Unicode: code point 21 is a lone surrogate',
      'https://example.org/\ud83d',
    ],
    // A label that folds to nothing can never be asked for, and engines disagree on where it sorts.
    ['author', 'must hold more than white space and combining marks, got U+0301', '\u0301'],
    ['category', 'must hold more than white space and combining marks, got U+0085', '\u0085'],
    ['work', 'must hold more than white space and combining marks, got U+0020 U+0301 U+0020', ' \u0301 '],
    ['genre', 'must hold more than white space and combining marks, got U+20DD', '\u20dd'],
    ['quote', 'must be at most 10000 characters, got 10001', 'q'.repeat(10_001)],
    [
      'language',
      'must be an ISO 639-1 language code of two letters, e.g. en, fr, de, es (write it in lower case: fr), got "FR"',
      'FR',
    ],
    ['language', 'must be an ISO 639-1 language code of two letters, e.g. en, fr, de, es, got "fra"', 'fra'],
    ['language', 'must be an ISO 639-1 language code of two letters, e.g. en, fr, de, es, got "xx"', 'xx'],
    ['language', 'must be a string, got 7', 7],
  ])('%s %s', (field, message, value) => {
    expect(problemsOf(record({ [field]: value }))).toEqual([{ record: 1, field, message }]);
  });

  it.each([
    'id',
    'author',
    'author_id',
    'work',
    'work_id',
    'category',
    'genre',
    'publish_date',
    'source',
    'quote',
  ])('a missing %s is reported', (field) => {
    expect(problemsOf(record({ [field]: undefined }))).toEqual([{ record: 1, field, message: 'is missing' }]);
  });

  it("takes a record without a language, the contract's Quote having none: its quote has no language", () => {
    const quote = new Validator().check(record({ language: undefined }), 1);
    expect(quote).not.toBeNull();
    expect(Object.keys(quote as object)).not.toContain('language');
    expect(problemsOf(record({ language: null }))).toEqual([
      { record: 1, field: 'language', message: 'must be a string, got null' },
    ]);
  });

  it('names the bad element of a genre array', () => {
    expect(problemsOf(record({ genre: ['lyric', ' ', 7, '\u0308'] }))).toEqual([
      { record: 1, field: 'genre[1]', message: 'must not be empty or only white space' },
      { record: 1, field: 'genre[2]', message: 'must be a string, got 7' },
      {
        record: 1,
        field: 'genre[3]',
        message: 'must hold more than white space and combining marks, got U+0308',
      },
    ]);
  });

  it.each([
    [null, 'null'],
    [[record()], 'an array'],
    ['text', 'the string "text"'],
    [5, '5'],
  ])('that is not an object (%j) is reported as a whole', (value, got) => {
    expect(problemsOf(value)).toEqual([{ record: 1, message: `must be a JSON object, got ${got}` }]);
  });

  it('reports every problem of the record, with its line when known', () => {
    const validator = new Validator();
    expect(validator.check(record({ id: 'x', author: '', source: 'nope' }), 4, 9)).toBeNull();
    expect(validator.problems).toEqual([
      { record: 4, line: 9, field: 'id', message: 'must be an integer ≥ 1, got the string "x"' },
      { record: 4, line: 9, field: 'author', message: 'must not be empty or only white space' },
      { record: 4, line: 9, field: 'source', message: 'must be an absolute http or https URL, got "nope"' },
    ]);
  });
});

describe('rules across records', () => {
  it('a duplicate id names the record that used it first', () => {
    const validator = new Validator();
    validator.check(record({ id: 5 }), 1);
    validator.check(record({ id: 6 }), 2);
    expect(validator.check(record({ id: 5 }), 3)).toBeNull();
    expect(validator.problems).toEqual([
      { record: 3, field: 'id', message: 'id 5 is already used by record 1' },
    ]);
  });

  it('detects duplicates among large and sparse ids too', () => {
    const validator = new Validator();
    const ids = [1, 1023, 1024, 5_000_000, 2 ** 40, Number.MAX_SAFE_INTEGER];
    for (const [i, id] of ids.entries()) validator.check(record({ id }), i + 1);
    for (const [i, id] of ids.entries()) validator.check(record({ id }), ids.length + i + 1);
    expect(validator.problems.map((p) => p.message)).toEqual(
      ids.map((id, i) => `id ${id} is already used by record ${i + 1}`),
    );
  });

  it('an author_id may not carry a second name', () => {
    const validator = new Validator();
    validator.check(record({ id: 1 }), 1);
    expect(validator.check(record({ id: 2, author: 'J. Austen' }), 2)).toBeNull();
    expect(validator.problems).toEqual([
      {
        record: 2,
        field: 'author',
        message: 'author_id 7 already belongs to "Jane Austen" (record 1), not "J. Austen"',
      },
    ]);
  });

  it('an author name may not carry a second author_id', () => {
    const validator = new Validator();
    validator.check(record({ id: 1 }), 1);
    expect(validator.check(record({ id: 2, author_id: 8, work: 'Emma', work_id: 71 }), 2)).toBeNull();
    expect(validator.problems).toEqual([
      {
        record: 2,
        field: 'author_id',
        message: 'author "Jane Austen" already has author_id 7 (record 1), not 8',
      },
    ]);
  });

  it('a work_id belongs to one (work, author) pair, and the pair to one work_id', () => {
    const validator = new Validator();
    validator.check(record({ id: 1 }), 1);
    validator.check(record({ id: 2, work: 'Emma' }), 2);
    validator.check(record({ id: 3, work_id: 71 }), 3);
    expect(validator.problems).toEqual([
      {
        record: 2,
        field: 'work_id',
        message:
          'work_id 70 already belongs to "Pride and Prejudice" by "Jane Austen" (record 1), not "Emma" by "Jane Austen"',
      },
      {
        record: 3,
        field: 'work_id',
        message: '"Pride and Prejudice" by "Jane Austen" already has work_id 70 (record 1), not 71',
      },
    ]);
  });

  it('the same title by two authors has two work_ids', () => {
    const validator = new Validator();
    validator.check(record({ id: 1, work: 'Poems', work_id: 1 }), 1);
    const other = validator.check(
      record({ id: 2, author: 'Emily Brontë', author_id: 12, work: 'Poems', work_id: 2 }),
      2,
    );
    expect(other?.work_id).toBe(2);
    expect(validator.problems).toEqual([]);
  });
});

describe('reporting', () => {
  it('keeps the first problems and counts the rest', () => {
    const validator = new Validator({ maxProblems: 3 });
    for (let i = 1; i <= 5; i++) validator.check(record({ id: i, quote: '' }), i);
    expect(validator.problems.map((p) => p.record)).toEqual([1, 2, 3]);
    expect(validator.problemCount).toBe(5);
  });

  it('counts unknown fields for one warning and still accepts the records', () => {
    const validator = new Validator();
    expect(validator.check(record({ id: 1, mood: 'wry', colour: 'red' }), 1)).not.toBeNull();
    expect(validator.check(record({ id: 2, mood: 'grim' }), 2)).not.toBeNull();
    expect(validator.check(record({ id: 3 }), 3)).not.toBeNull();
    expect(validator.warnings()).toEqual(['2 records have unknown fields, ignored: mood (2), colour (1)']);
  });

  it('has no warning for clean input', () => {
    const validator = new Validator();
    validator.check(record(), 1);
    expect(validator.warnings()).toEqual([]);
  });
});
