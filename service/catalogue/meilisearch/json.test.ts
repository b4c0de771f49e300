/**
 * Pages passed through as the engine wrote them (meilisearch/json.ts): accepted exactly when the
 * bytes are what the route's serialiser writes for the page, refused for any other spelling. The
 * engine's own answers are compared on a real engine in `routes/json-path-meilisearch.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { FIXTURE_QUOTES } from '../../test-support/fixtures.ts';
import { QUOTE_FIELDS, type Quote, type QuoteField } from '../port.ts';
import { isRawDocument, rawPage, rawVersionedPage } from './json.ts';

/** An answer of `POST /documents/fetch` holding `results` as written, and its page numbers. */
function answer(results: string, total = 1234): Buffer {
  return Buffer.from(`{"results":${results},"offset":0,"limit":20,"total":${total}}`);
}

/** The projection as the route writes it: the fields in QUOTE_FIELDS order. */
function project(quote: Quote, fields: readonly QuoteField[]): Record<string, unknown> {
  return Object.fromEntries(QUOTE_FIELDS.filter((f) => fields.includes(f)).map((f) => [f, quote[f]]));
}

const QUOTES = FIXTURE_QUOTES.slice(0, 20);
const AWKWARD: Quote = {
  ...(FIXTURE_QUOTES[0] as Quote),
  author: 'Zoë "Quoted" O\'Brien \\ back',
  work: 'Tab\there, new\nline, \b\f\r and \u0001\u001f\u007f',
  genre: ['tab\there', 'plain', '“curly” 𝄞'],
  quote: 'Line separator \u2028, </script>, emoji 🙂, a quote " and a backslash \\',
};

describe('rawPage', () => {
  it('passes a page through byte for byte, with its count and total, for any projection', () => {
    const projections: QuoteField[][] = [
      [...QUOTE_FIELDS],
      ['id', 'author', 'quote'],
      ['quote'],
      ['genre'],
      ['id', 'publish_date', 'quote_length', 'source'],
    ];
    for (const fields of projections) {
      const items = JSON.stringify([...QUOTES, AWKWARD].map((q) => project(q, fields)));
      const page = rawPage(answer(items, 987_654), fields);
      expect(page?.items.toString('utf8')).toBe(items);
      expect(page?.count).toBe(QUOTES.length + 1);
      expect(page?.total).toBe(987_654);
    }
  });

  it('passes through quotes without a language, as the route writes them, beside quotes with one', () => {
    const { language: _, ...unspoken } = QUOTES[1] as Quote;
    const quotes = [QUOTES[0] as Quote, unspoken as Quote, AWKWARD];
    for (const fields of [[...QUOTE_FIELDS], ['id', 'language'], ['language']] as QuoteField[][]) {
      const items = JSON.stringify(quotes.map((q) => project(q, fields)));
      expect(rawPage(answer(items), fields)?.items.toString('utf8'), fields.join()).toBe(items);
      // A page of the language alone, some quotes without one, is read the plain way instead.
      if (fields.length > 1) {
        const versioned = quotes.map((q) => ({ ...project(q, fields), catalogue_version: 'v' }));
        expect(rawVersionedPage(answer(JSON.stringify(versioned)), fields, 'v')?.items.toString('utf8')).toBe(
          items,
        );
      }
    }
    expect(isRawDocument(Buffer.from('{}'), ['language'])).toBe(true);
    expect(isRawDocument(Buffer.from('{"id":3}'), ['id', 'language'])).toBe(true);
    expect(isRawDocument(Buffer.from('{"language":"x","id":3}'), ['id', 'language'])).toBe(false);
  });

  it('reads the fields in the engine order whatever order they were asked in', () => {
    const items = JSON.stringify(QUOTES.map((q) => project(q, ['id', 'quote'])));
    expect(rawPage(answer(items), ['quote', 'id'])?.count).toBe(QUOTES.length);
  });

  it('passes an empty page through, with the total that says why', () => {
    expect(rawPage(answer('[]', 0), ['id'])).toEqual({ items: Buffer.from('[]'), count: 0, total: 0 });
    expect(rawPage(answer('[]', 40), ['id'])?.total).toBe(40);
  });

  it('returns a view of the answer, the bytes of its results array', () => {
    const body = answer(JSON.stringify([{ id: 7 }]));
    const page = rawPage(body, ['id']);
    expect(page?.items.buffer).toBe(body.buffer);
    expect(page?.items.toString()).toBe('[{"id":7}]');
  });

  const one = (quote: Record<string, unknown>) => `[${JSON.stringify(quote)}]`;
  const base = project(QUOTES[0] as Quote, ['id', 'author', 'genre', 'quote_length']);
  const fields: QuoteField[] = ['id', 'author', 'genre', 'quote_length'];

  it('accepts the reference answer the refusals below differ from', () => {
    expect(rawPage(answer(one(base)), fields)?.count).toBe(1);
  });

  it.each([
    ['a field missing (an index built by an earlier release)', one({ ...base, quote_length: undefined })],
    ['a field more', one({ ...base, work: 'Extra' })],
    [
      'fields in another order',
      one({ author: base.author, id: base.id, genre: base.genre, quote_length: 1 }),
    ],
    ['a null value', one({ ...base, author: null })],
    ['a number for a string', one({ ...base, author: 5 })],
    ['a string for an integer', one({ ...base, quote_length: '12' })],
    ['a fraction', one({ ...base, quote_length: 12.5 })],
    ['an exponent', JSON.stringify([base]).replace(/"quote_length":\d+/, '"quote_length":1e3')],
    ['a leading zero', JSON.stringify([base]).replace(/"quote_length":\d+/, '"quote_length":012')],
    ['a sign', one({ ...base, quote_length: -4 })],
    ['an integer beyond 15 digits', one({ ...base, id: 1_234_567_890_123_456 })],
    ['a genre that is not a list', one({ ...base, genre: 'drama' })],
    ['a genre list holding a number', one({ ...base, genre: ['drama', 3] })],
    ['a nested object', one({ ...base, genre: [{ name: 'drama' }] })],
    ['white space', JSON.stringify([base], null, 1)],
    ['an escaped slash', one({ ...base, author: 'a/b' }).replace('a/b', 'a\\/b')],
    ['a letter written as \\u', one({ ...base, author: 'é' }).replace('é', '\\u00e9')],
    ['upper-case hex', one({ ...base, author: '\u001f' }).replace('\\u001f', '\\u001F')],
    [
      '\\u for a control character with a short escape',
      one({ ...base, author: '\n' }).replace('\\n', '\\u000a'),
    ],
    ['an unknown escape', one({ ...base, author: 'ab' }).replace('ab', 'a\\qb')],
    ['an unterminated string', '[{"id":1,"author":"abc'],
  ])('refuses %s', (_name, results) => {
    expect(rawPage(answer(results), fields)).toBeUndefined();
  });

  it.each([
    ['no results array first', Buffer.from('{"offset":0,"results":[],"limit":20,"total":0}')],
    ['a tail of another shape', Buffer.from('{"results":[],"offset":0,"limit":20,"total":0,"more":1}')],
    ['a total that is not an integer', Buffer.from('{"results":[],"offset":0,"limit":20,"total":1.5}')],
    ['bytes after the answer', Buffer.from('{"results":[],"offset":0,"limit":20,"total":0} ')],
    ['a search answer', Buffer.from('{"hits":[],"offset":0,"limit":20,"estimatedTotalHits":0}')],
    ['no JSON at all', Buffer.from('<html>502 Bad Gateway</html>')],
    ['nothing', Buffer.alloc(0)],
  ])('refuses an answer with %s', (_name, body) => {
    expect(rawPage(body, ['id'])).toBeUndefined();
  });

  it('reads every escape of a long page, wherever it lies', () => {
    const plain = QUOTES.map((q) => project(q, fields));
    const escaped = { ...base, author: 'a "quoted" \\ name\n' };
    const items = JSON.stringify([escaped, ...plain, escaped, ...plain, escaped]);
    expect(rawPage(answer(items), fields)?.count).toBe(2 * plain.length + 3);
    // One escape of another spelling, after many strings without any, refuses the page.
    const late = JSON.stringify([escaped, ...plain, { ...base, author: 'ab' }]).replace('"ab"', '"a\\/b"');
    expect(rawPage(answer(late), fields)).toBeUndefined();
    const last = JSON.stringify([...plain, { ...base, author: 'é' }]).replace('é', '\\u00e9');
    expect(rawPage(answer(last), fields)).toBeUndefined();
  });

  it('leaves a text of millions of escapes to be read the plain way, without failing', () => {
    const huge = { ...base, author: '\n'.repeat(5_000_000) };
    const body = answer(one(huge));
    expect(() => rawPage(body, fields)).not.toThrow();
    expect(rawPage(body, fields)).toBeUndefined();
    expect(isRawDocument(Buffer.from(JSON.stringify(huge)), fields)).toBe(false);
  });

  it('counts documents, not the braces and commas inside their texts', () => {
    const tricky = { id: 3, author: '},{"id":4,"author":"x"}', genre: ['],"offset":0'], quote_length: 9 };
    const items = JSON.stringify([tricky, base]);
    const page = rawPage(answer(items, 2), fields);
    expect(page?.count).toBe(2);
    expect(page?.items.toString()).toBe(items);
  });
});

describe('rawVersionedPage', () => {
  const fields: QuoteField[] = ['id', 'author', 'genre', 'quote'];
  const versioned = (quotes: readonly Quote[], version: string) =>
    JSON.stringify(quotes.map((q) => ({ ...project(q, fields), catalogue_version: version })));

  it('passes pages through across thousands of catalogue versions, one after another', () => {
    const quotes = QUOTES.slice(0, 3);
    const expected = JSON.stringify(quotes.map((q) => project(q, fields)));
    for (let v = 0; v < 5_000; v++) {
      const version = `v-${v}`;
      const page = rawVersionedPage(answer(versioned(quotes, version), 3), fields, version);
      if (page?.items.toString('utf8') !== expected)
        throw new Error(`version ${version} was not passed through`);
    }
    expect(rawVersionedPage(answer(versioned(quotes, 'v-0'), 3), fields, 'v-1')).toBeUndefined();
  });

  it('passes a page through with the version of each quote taken out, in a buffer of its own', () => {
    const body = answer(versioned([...QUOTES, AWKWARD], 'v-2026'), 55);
    const page = rawVersionedPage(body, fields, 'v-2026');
    expect(page?.items.toString('utf8')).toBe(
      JSON.stringify([...QUOTES, AWKWARD].map((q) => project(q, fields))),
    );
    expect(page?.count).toBe(QUOTES.length + 1);
    expect(page?.total).toBe(55);
    expect(page?.items.buffer).not.toBe(body.buffer);
    expect(rawVersionedPage(answer('[]', 0), fields, 'v-2026')).toEqual({
      items: Buffer.from('[]'),
      count: 0,
      total: 0,
    });
  });

  it.each([
    ['another version', versioned(QUOTES, 'v-2027')],
    ['one quote of another version', versioned(QUOTES, 'v-2026').replace(/v-2026"\}\]$/, 'v-2027"}]')],
    ['no version', JSON.stringify(QUOTES.map((q) => project(q, fields)))],
    [
      'a version before the fields',
      JSON.stringify([{ catalogue_version: 'v-2026', ...project(QUOTES[0] as Quote, fields) }]),
    ],
    ['a field after the version', versioned(QUOTES, 'v-2026').replace(/"v-2026"\}/g, '"v-2026","x":1}')],
  ])('refuses a page with %s', (_name, results) => {
    expect(rawVersionedPage(answer(results), fields, 'v-2026')).toBeUndefined();
  });
});

describe('isRawDocument', () => {
  it('accepts one quote written as the route writes it, for any projection', () => {
    for (const fields of [[...QUOTE_FIELDS], ['quote'], ['id', 'genre', 'quote']] as QuoteField[][]) {
      for (const quote of [...QUOTES, AWKWARD]) {
        expect(isRawDocument(Buffer.from(JSON.stringify(project(quote, fields))), fields)).toBe(true);
      }
    }
  });

  it.each([
    ['a field missing', JSON.stringify({ id: 1, quote: 'q' }), ['id', 'genre', 'quote']],
    ['a field more', JSON.stringify({ id: 1, genre: ['a'], quote: 'q' }), ['id', 'quote']],
    ['fields in another order', JSON.stringify({ quote: 'q', id: 1 }), ['id', 'quote']],
    ['bytes after the document', `${JSON.stringify({ id: 1 })}\n`, ['id']],
    ['a list of documents', JSON.stringify([{ id: 1 }]), ['id']],
    ['an error answer', JSON.stringify({ message: 'x', code: 'document_not_found' }), ['id']],
    ['nothing', '', ['id']],
  ] as [string, string, QuoteField[]][])('refuses %s', (_name, body, fields) => {
    expect(isRawDocument(Buffer.from(body), fields)).toBe(false);
  });
});
