/**
 * What the tests of answers written as bytes (routes/json-path*.test.ts) share: quotes whose
 * texts JSON must escape, and a catalogue that answers only as objects, for the route's own
 * serialiser to write the bytes the other path must match.
 */

import type { CatalogueIndex, Quote } from '../catalogue/port.ts';
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
