import { describe, expect, it } from 'vitest';
import { combine, type LoadResult } from './load.ts';

const run = (over: Partial<LoadResult>): LoadResult => ({
  rps: 1000,
  p50: 1,
  p99: 5,
  mean: 1,
  requests: 1000,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statuses: { '200': 1000 },
  seconds: 1,
  ...over,
});

describe('combine', () => {
  it('adds slices up: req/s over their measured time, worst p99, median p50, summed counts', () => {
    const combined = combine([
      run({ rps: 1000, requests: 2000, seconds: 2.1, p50: 1, p99: 4, statuses: { '200': 2000 } }),
      run({
        rps: 3000,
        requests: 6000,
        seconds: 2.05,
        p50: 3,
        p99: 9,
        non2xx: 2,
        statuses: { '200': 5998, '503': 2 },
      }),
      run({ rps: 2000, requests: 4000, seconds: 2.0, p50: 2, p99: 6, errors: 1, statuses: { '200': 4000 } }),
    ]);
    // 12,000 requests over 2 + 2 + 2 s of measured load.
    expect(combined.rps).toBeCloseTo(2000, 6);
    expect(combined).toMatchObject({
      p50: 2,
      p99: 9,
      requests: 12_000,
      non2xx: 2,
      errors: 1,
      timeouts: 0,
      statuses: { '200': 11_998, '503': 2 },
    });
    expect(combined.seconds).toBeCloseTo(6.15, 6);
  });

  it('refuses to combine nothing', () => {
    expect(() => combine([])).toThrow('nothing to combine');
  });
});
