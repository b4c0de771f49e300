/**
 * What the tests of answers written as bytes (routes/json-path*.test.ts) share: quotes whose
 * texts JSON must escape, the list requests to ask, a catalogue that answers only as objects,
 * for the route's own serialiser to write the bytes the other path must match, and the
 * comparison of the two answers.
 */

import type { FastifyInstance, LightMyRequestResponse as Response } from 'fastify';
import { expect } from 'vitest';
import { distinctRequests, seededRandom, vocabularyFrom } from '../../loadtest/lib/mix.ts';
import type { CatalogueIndex, Quote } from '../catalogue/port.ts';
import { get } from '../test-app.ts';
import { FIXTURE_QUOTES } from './fixtures.ts';

/**
 * Texts that JSON must escape, characters that UTF-8 writes in 2, 3 and 4 bytes, and text that
 * looks like the envelope around a list.
 */
export const AWKWARD: readonly string[] = [
  'She said "no" and left.',
  'A back\\slash, a tab\there and a new\nline.',
  'Control \u0001 and \u001f, backspace \b, form feed \f, return \r, delete \u007f.',
  'Line separator \u2028 and paragraph separator \u2029.',
  'Ünïcödé “curly” — and a clef 𝄞 and an emoji 🙂.',
  '</script><script>alert(1)</script> and },{"id":1} and ],"offset":0',
];

/** One quote per {@link AWKWARD} text after the fixtures; every other one by an awkward author. */
export function awkwardQuotes(): Quote[] {
  const base = FIXTURE_QUOTES.at(-1) as Quote;
  return AWKWARD.map((text, i) => ({
    ...base,
    id: base.id + 1000 + i,
    author: i % 2 === 0 ? 'Zoë "Quoted" O\'Brien' : base.author,
    author_id: i % 2 === 0 ? 99_001 : base.author_id,
    work: i % 2 === 0 ? 'Back\\slash: “A” Work' : base.work,
    work_id: i % 2 === 0 ? 99_002 : base.work_id,
    genre: ['tab\there', 'plain'],
    source: `https://example.org/q/${i}?a="b"`,
    quote: text,
    quote_length: Array.from(text).length,
  }));
}

/**
 * The same catalogue without `listJson` or `getJson`: answers go through the route's serialiser.
 * `close` replaces the catalogue's own when another app shares it and closes it.
 */
export function objectsOnly(
  catalogue: CatalogueIndex,
  close: () => Promise<void> = () => catalogue.close(),
): CatalogueIndex {
  return {
    kind: catalogue.kind,
    info: () => catalogue.info(),
    list: (query) => catalogue.list(query),
    get: (id, fields) => catalogue.get(id, fields),
    random: (filters, fields) => catalogue.random(filters, fields),
    firstMatch: (filters, ids, fields) => catalogue.firstMatch(filters, ids, fields),
    facets: (query) => catalogue.facets(query),
    randomSample: (filters, fields, count) => catalogue.randomSample(filters, fields, count),
    close,
  };
}

/**
 * The list requests both ways of writing an answer must answer alike, over a catalogue of
 * `quotes` holding {@link awkwardQuotes}: a seeded draw of the benchmark's mix, then the
 * projections, awkward texts and edges it may miss.
 */
export function listPaths(quotes: readonly Quote[]): string[] {
  const vocab = vocabularyFrom(quotes.length, Math.max(...quotes.map((q) => q.id)), [...quotes]);
  const paths = distinctRequests(vocab, seededRandom(11), 600)
    .map((r) => r.path)
    .filter((p) => p.startsWith('/quotes?') || p.startsWith('/api/v1/'));
  paths.push(
    '/quotes',
    '/quotes?fields=quote',
    '/quotes?fields=source',
    '/quotes?fields=quote,source&limit=20',
    // The runs written as one fragment (the profile fields; source with quote), first and not.
    '/quotes?fields=author,author_id,work,work_id,category,genre,publish_date&limit=50',
    '/quotes?fields=quote,source,publish_date,genre,category,work_id,work,author_id,author&limit=50',
    '/quotes?fields=author,work,work_id,category,genre,publish_date,quote&limit=50',
    '/quotes?fields=language,id&limit=7',
    '/quotes?fields=source,genre&limit=100',
    '/quotes?author=Zo%C3%AB%20%22Quoted%22%20O%27Brien',
    '/quotes?genre=tab%09here&fields=quote,author,work,genre',
    '/api/v1/quotes?genre=plain',
    '/quotes?author_id=99001&sort=quote_length&order=desc',
    '/quotes?page=3&limit=10',
    '/quotes?page=999&limit=100',
    '/quotes?author=Nobody%20At%20All',
    '/quotes?q=line',
    '/quotes?q=line&sort=quote_length&order=desc&fields=quote,id',
    '/quotes?q=li&sort=author&limit=3&page=2',
  );
  return paths;
}

/** Expects the answer to `path` to be the reference's: status, type, ETag and every byte. */
export function expectSameAnswer(path: string, response: Response, reference: Response): void {
  expect({ path, status: response.statusCode }).toEqual({ path, status: reference.statusCode });
  expect(response.headers['content-type']).toBe(reference.headers['content-type']);
  expect(response.headers.etag).toBe(reference.headers.etag);
  if (response.body !== reference.body) {
    // Show where the bytes part, rather than two 20 kB strings.
    // The first differing UTF-16 unit; past the shorter body when one is a prefix of the other.
    let at = 0;
    while (at < response.body.length && response.body[at] === reference.body[at]) at++;
    const around = (body: string) => body.slice(Math.max(0, at - 40), at + 40);
    expect({ path, at, got: around(response.body) }).toEqual({ path, at, got: around(reference.body) });
    expect({ path, length: response.body.length }).toEqual({ path, length: reference.body.length });
  }
}

/** Expects the awkward quotes of one author, as `app` writes them, to parse back to the stored ones. */
export async function expectAwkwardTextsParseBack(app: FastifyInstance): Promise<void> {
  const response = await get(
    app,
    '/quotes?author_id=99001&limit=100&fields=id,author,work,genre,source,quote',
  );
  expect(response.statusCode).toBe(200);
  const items = (response.json() as { items: Quote[] }).items;
  const stored = awkwardQuotes().filter((q) => q.author_id === 99_001);
  expect(items).toEqual(
    stored.map((q) => ({
      id: q.id,
      author: q.author,
      work: q.work,
      genre: q.genre,
      source: q.source,
      quote: q.quote,
    })),
  );
}
