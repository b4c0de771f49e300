import { describe, expect, it } from 'vitest';
import { syntheticQuotes } from '../service/test-support/fixtures.ts';
import { QualityChecker } from './quality.ts';

describe('data-quality checks', () => {
  it('remember every quote of a large catalogue: no false fault, and a late repeat names the first', () => {
    const checker = new QualityChecker();
    const quotes = [...syntheticQuotes(150_000, { label: 'Q' })];
    let faults = 0;
    for (const [i, quote] of quotes.entries()) faults += checker.check(quote, i + 1, i + 2).length;
    expect(faults).toBe(0);
    const first = quotes[123_456 - 1];
    if (first === undefined) throw new Error('no such quote');
    const again = { ...first, id: 999_999, quote: `  ${first.quote.toUpperCase()} ` };
    expect(checker.check(again, 150_001, 150_002)).toEqual([
      {
        record: 150_001,
        line: 150_002,
        field: 'quote',
        message: `the same quote by "${first.author}" as record 123456 (line 123457) (the same folded text and author)`,
      },
    ]);
  });

  it('tells apart the same text by two authors, and a title shared by two authors with other sources', () => {
    const checker = new QualityChecker();
    const base = [...syntheticQuotes(2, { label: 'T' })];
    const [a, b] = base as [(typeof base)[number], (typeof base)[number]];
    expect(checker.check(a, 1)).toEqual([]);
    expect(checker.check({ ...b, quote: a.quote, work: a.work }, 2)).toEqual([]);
  });
});
