/**
 * Shape checks of the contract's response bodies (docs/api.md#errors, #the-quote, #listing-quotes
 * and #the-genre-form). Pure functions over parsed JSON, usable from k6 checks and from Node tests alike.
 */

import { QUOTE_FIELDS } from '../../service/catalogue/fields.ts';

export { QUOTE_FIELDS };

/** The fields of a `/api/v1/quotes` item (docs/api.md#the-genre-form). */
export const V1_FIELDS = ['id', 'author', 'work', 'genre', 'publish_date', 'quote_length', 'source', 'quote'];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInt(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

function isText(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

const FIELD_RULES: Record<string, (value: unknown) => boolean> = {
  id: isPositiveInt,
  author: isText,
  author_id: isPositiveInt,
  work: isText,
  work_id: isPositiveInt,
  category: isText,
  genre: (v) => Array.isArray(v) && v.length > 0 && v.every(isText),
  publish_date: (v) => typeof v === 'string' && /^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$/.test(v),
  quote_length: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0,
  source: (v) => typeof v === 'string' && /^https?:\/\/\S+$/.test(v),
  quote: isText,
  language: (v) => typeof v === 'string' && /^[a-z]{2}$/.test(v),
};

/** Keys of an object, sorted, for exact-set comparisons. */
function keysOf(value: Json): string {
  return Object.keys(value).sort().join(',');
}

/**
 * True when `value` is a quote holding exactly `fields` (all fields when null), each valid.
 */
export function isQuote(value: unknown, fields: readonly string[] | null = null): boolean {
  if (!isObject(value)) return false;
  const wanted = fields ?? QUOTE_FIELDS;
  if (keysOf(value) !== [...new Set(wanted)].sort().join(',')) return false;
  return wanted.every((f) => FIELD_RULES[f]?.(value[f]) === true);
}

function isPagination(value: unknown): boolean {
  if (!isObject(value)) return false;
  return (
    isPositiveInt(value.page) &&
    isPositiveInt(value.limit) &&
    isPositiveInt(value.total_pages) &&
    isPositiveInt(value.total_quotes) &&
    (value.page as number) <= (value.total_pages as number) &&
    (value.total_pages as number) === Math.ceil((value.total_quotes as number) / (value.limit as number))
  );
}

/** A 200 QuotesResponse: 1..limit items of the requested fields and a consistent pagination. */
export function isQuotesResponse(value: unknown, fields: readonly string[] | null = null): boolean {
  if (!isObject(value) || keysOf(value) !== 'items,pagination') return false;
  const { items, pagination } = value;
  if (!Array.isArray(items) || items.length === 0 || !isPagination(pagination)) return false;
  if (items.length > (pagination as { limit: number }).limit) return false;
  return items.every((item) => isQuote(item, fields));
}

/** A 200 answer of `/api/v1/quotes`. */
export function isV1Response(value: unknown): boolean {
  if (!isObject(value) || keysOf(value) !== 'data,pagination,status_code') return false;
  const { data, pagination } = value;
  return (
    value.status_code === 200 &&
    Array.isArray(data) &&
    data.length > 0 &&
    isPagination(pagination) &&
    data.every((item) => isQuote(item, V1_FIELDS))
  );
}

/** The contract's Error object with the given status and identifier (docs/api.md#errors). */
export function isErrorBody(value: unknown, code: number, error: string): boolean {
  return (
    isObject(value) &&
    keysOf(value) === 'code,details,error' &&
    value.code === code &&
    value.error === error &&
    isText(value.details)
  );
}

/** The `fields` a request path asks for, or null for all fields. */
export function requestedFields(path: string): string[] | null {
  const match = /[?&]fields=([^&]*)/.exec(path);
  if (match === null || match[1] === undefined) return null;
  return decodeURIComponent(match[1].replace(/\+/g, ' '))
    .split(',')
    .map((f) => f.trim());
}

/** Parses a JSON body; undefined when it is not JSON. */
export function parseJson(body: string | null | undefined): unknown {
  if (typeof body !== 'string' || body === '') return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch (_error) {
    return undefined;
  }
}
