/**
 * The quote's fields and the keys that sort them (docs/api.md#the-quote, #listing-quotes): the one
 * list the service, the indexer and the load tests share. Pure on purpose (no Node API, no import),
 * so k6 scripts import it too.
 */

/** Keys `sort` accepts (docs/api.md#listing-quotes): the fields before `source`, in their order. */
export const SORT_FIELDS = [
  'id',
  'author',
  'author_id',
  'work',
  'work_id',
  'category',
  'genre',
  'publish_date',
  'quote_length',
] as const;
export type SortField = (typeof SORT_FIELDS)[number];

/** Every field of a Quote, in the order responses list them. */
export const QUOTE_FIELDS = [
  ...SORT_FIELDS,
  'source',
  'quote',
  // Last, so that the fields a profile decides stay adjacent (sqlite/json.ts writes them as one).
  'language',
] as const;
export type QuoteField = (typeof QUOTE_FIELDS)[number];

/**
 * A full quote as the catalogue holds it (docs/api.md#the-quote). No field of the contract's is
 * ever null or absent; `language`, which the contract's Quote does not have, is absent from a
 * quote whose record did not give one.
 */
export interface Quote {
  id: number;
  author: string;
  author_id: number;
  work: string;
  work_id: number;
  category: string;
  genre: string[];
  publish_date: string;
  quote_length: number;
  source: string;
  quote: string;
  /** ISO 639-1 code of the language the quote is written in (language.ts), when the record says. */
  language?: string;
}
