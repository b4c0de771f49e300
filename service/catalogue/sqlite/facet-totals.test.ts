import { describe, expect, it } from 'vitest';
import { type FacetValue, MAX_FACET_LIMIT } from '../port.ts';
import { WholeCatalogueFacets } from './facet-totals.ts';

const ranked = (limit: number): FacetValue[] =>
  Array.from({ length: Math.min(limit, 5) }, (_, i) => ({ value: `v${i}`, count: 10 - i }));

describe('facet counts of the whole catalogue', () => {
  it('apply only when nothing narrows the quotes', () => {
    expect(WholeCatalogueFacets.applies({ profiles: null, total: 9 }, undefined)).toBe(true);
    expect(WholeCatalogueFacets.applies({ profiles: null, total: 9 }, new Int32Array([1]))).toBe(false);
    expect(WholeCatalogueFacets.applies({ profiles: new Int32Array([0]), total: 9 }, undefined)).toBe(false);
    expect(
      WholeCatalogueFacets.applies(
        { profiles: new Int32Array(0), total: 1, ords: new Int32Array([3]) },
        undefined,
      ),
    ).toBe(false);
  });

  it('count each field once, for the most values, and answer any limit with the first of them', () => {
    const whole = new WholeCatalogueFacets();
    const asked: number[] = [];
    const count = (limit: number) => {
      asked.push(limit);
      return ranked(limit);
    };
    expect(whole.values('genre', 2, count)).toEqual(ranked(2));
    expect(whole.values('genre', 4, count)).toEqual(ranked(4));
    expect(whole.values('author', 1, count)).toEqual(ranked(1));
    expect(asked).toEqual([MAX_FACET_LIMIT, MAX_FACET_LIMIT]);
  });

  it('are not changed by a caller changing an answer', () => {
    const whole = new WholeCatalogueFacets();
    const first = whole.values('work', 3, ranked);
    (first[0] as FacetValue).count = 0;
    first.pop();
    expect(whole.values('work', 3, ranked)).toEqual(ranked(3));
  });
});
