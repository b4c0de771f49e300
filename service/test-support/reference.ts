/** The contract's reference ordering and projection of quotes, which the suites check engines against. */
import {
  compareCodePoints,
  fold,
  type Quote,
  type QuoteField,
  type QuoteProjection,
  type SortField,
  type SortKey,
} from '../catalogue/port.ts';

/** Projects a full quote to the requested fields (in {@link QUOTE_FIELDS} order). */
export function project(quote: Quote, fields: readonly QuoteField[] | null): QuoteProjection {
  if (fields === null) return quote;
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = quote[f];
  return out as QuoteProjection;
}

/** The comparator the contract defines for one sort key, used by tests and in-memory checks. */
export function sortValue(quote: Quote, field: SortField): string | number {
  switch (field) {
    case 'author':
    case 'work':
    case 'category':
      return fold(quote[field]);
    case 'genre':
      return fold(quote.genre[0] ?? '');
    default:
      return quote[field];
  }
}

/** Reference ordering of the contract: the sort keys, then id ascending. */
export function compareQuotes(a: Quote, b: Quote, sort: readonly SortKey[]): number {
  for (const key of sort) {
    const x = sortValue(a, key.field);
    const y = sortValue(b, key.field);
    const c = typeof x === 'number' ? x - (y as number) : compareCodePoints(x, y as string);
    if (c !== 0) return key.direction === 'asc' ? c : -c;
  }
  return a.id - b.id;
}
