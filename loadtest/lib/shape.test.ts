import { describe, expect, it } from 'vitest';
import { FIXTURE_QUOTES } from '../../service/test-support/fixtures.ts';
import { isErrorBody, isQuote, isQuotesResponse, isV1Response, parseJson, requestedFields } from './shape.ts';

const quote = { ...(FIXTURE_QUOTES[0] as object) } as Record<string, unknown>;
const page = (items: unknown[], pagination: Record<string, number>) => ({ items, pagination });

describe('isQuote', () => {
  it('accepts a full quote and rejects one with a field missing, null, extra or mistyped', () => {
    expect(isQuote(quote)).toBe(true);
    const { source: _, ...missing } = quote;
    expect(isQuote(missing)).toBe(false);
    expect(isQuote({ ...quote, work: null })).toBe(false);
    expect(isQuote({ ...quote, extra: 1 })).toBe(false);
    expect(isQuote({ ...quote, genre: 'fiction' })).toBe(false);
    expect(isQuote({ ...quote, publish_date: '28/01/1813' })).toBe(false);
    expect(isQuote({ ...quote, source: 'ftp://example.org' })).toBe(false);
    expect(isQuote({ ...quote, language: 'EN' })).toBe(false);
  });

  it('with fields, wants exactly those fields', () => {
    expect(isQuote({ id: 3, quote: 'x' }, ['id', 'quote'])).toBe(true);
    expect(isQuote({ id: 3, quote: 'x', author: 'A' }, ['id', 'quote'])).toBe(false);
    expect(isQuote({ id: 3 }, ['id', 'quote'])).toBe(false);
  });
});

describe('isQuotesResponse', () => {
  it('checks the items and that pagination is consistent', () => {
    expect(isQuotesResponse(page([quote], { page: 1, limit: 5, total_pages: 1, total_quotes: 1 }))).toBe(
      true,
    );
    expect(isQuotesResponse(page([quote], { page: 1, limit: 5, total_pages: 2, total_quotes: 6 }))).toBe(
      true,
    );
    // total_pages must be ceil(total_quotes / limit), and the page within it.
    expect(isQuotesResponse(page([quote], { page: 1, limit: 5, total_pages: 1, total_quotes: 6 }))).toBe(
      false,
    );
    expect(isQuotesResponse(page([quote], { page: 3, limit: 5, total_pages: 2, total_quotes: 6 }))).toBe(
      false,
    );
    expect(isQuotesResponse(page([], { page: 1, limit: 5, total_pages: 1, total_quotes: 1 }))).toBe(false);
    expect(
      isQuotesResponse(page([quote, quote], { page: 1, limit: 1, total_pages: 2, total_quotes: 2 })),
    ).toBe(false);
    expect(
      isQuotesResponse({ ...page([quote], { page: 1, limit: 5, total_pages: 1, total_quotes: 1 }), x: 1 }),
    ).toBe(false);
  });
});

describe('isV1Response', () => {
  it('wants status_code 200 and items of exactly the v1 fields', () => {
    const { author_id: _a, work_id: _w, category: _c, language: _l, ...item } = quote;
    const pagination = { page: 1, limit: 10, total_pages: 1, total_quotes: 1 };
    expect(isV1Response({ status_code: 200, data: [item], pagination })).toBe(true);
    expect(isV1Response({ status_code: 200, data: [quote], pagination })).toBe(false);
    expect(isV1Response({ status_code: 201, data: [item], pagination })).toBe(false);
  });
});

describe('isErrorBody', () => {
  it('wants exactly code, error and a non-empty details', () => {
    const body = { code: 429, error: 'too_many_requests', details: 'limit of 100 per minute; retry in 12 s' };
    expect(isErrorBody(body, 429, 'too_many_requests')).toBe(true);
    expect(isErrorBody(body, 400, 'too_many_requests')).toBe(false);
    expect(isErrorBody({ ...body, details: '' }, 429, 'too_many_requests')).toBe(false);
    expect(isErrorBody({ ...body, stack: 'at x' }, 429, 'too_many_requests')).toBe(false);
  });
});

describe('requestedFields and parseJson', () => {
  it('reads fields= from a path, decoded', () => {
    expect(requestedFields('/quotes?limit=5&fields=id%2Cauthor,quote')).toEqual(['id', 'author', 'quote']);
    expect(requestedFields('/quotes?limit=5')).toBeNull();
  });
  it('returns undefined for a body that is not JSON', () => {
    expect(parseJson('{"a":1}')).toEqual({ a: 1 });
    expect(parseJson('<html>')).toBeUndefined();
    expect(parseJson(null)).toBeUndefined();
  });
});
