import { describe, expect, it } from 'vitest';
import type { LoadResult } from './load.ts';
import {
  type BenchReport,
  type BenchResults,
  evaluate,
  failures,
  machine,
  mixP99Target,
  table,
} from './report.ts';

function load(over: Partial<LoadResult> = {}): LoadResult {
  return {
    rps: 10_000,
    p50: 4,
    p99: 12,
    mean: 4.5,
    requests: 100_000,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statuses: { '200': 100_000 },
    seconds: 10,
    ...over,
  };
}

function results(over: Partial<BenchResults> = {}): BenchResults {
  return {
    catalogue: { count: 200_000, bytes: 90_000_000, generateSeconds: null },
    indexing: { seconds: 12.5, peakRssBytes: 180_000_000 },
    bare: load({ rps: 20_000 }),
    serviceQuotes: load({ rps: 15_000 }),
    ratio: 0.75,
    mix: load({ p99: 18 }),
    byKind: { like: load({ p99: 30 }) },
    byId: load(),
    service: { idleRssBytes: 90_000_000, peakRssBytes: 150_000_000 },
    redis: {
      version: '7.0.15',
      memory: load({ rps: 15_000 }),
      redis: load({ rps: 13_500 }),
      cost: 0.1,
      requestsPerCall: 44.6,
      redisCpuUsPerRequest: 0.93,
    },
    ...over,
  };
}

const byName = (r: BenchResults, count: number) =>
  Object.fromEntries(evaluate(r, count).map((t) => [t.name, t]));

describe('evaluate', () => {
  it('passes every target when the numbers meet them', () => {
    expect(evaluate(results(), 200_000).every((t) => t.pass === true)).toBe(true);
  });

  it('fails the ratio below 0.70 and passes it at exactly 0.70', () => {
    expect(byName(results({ ratio: 0.7 }), 200_000)['GET /quotes: service / bare Fastify']?.pass).toBe(true);
    expect(byName(results({ ratio: 0.69 }), 200_000)['GET /quotes: service / bare Fastify']?.pass).toBe(
      false,
    );
  });

  it('holds the mix p99 to 20 ms up to 200k quotes and to 30 ms above', () => {
    expect(mixP99Target(200_000)).toBe(20);
    expect(mixP99Target(1_000_000)).toBe(30);
    const slow = results({ mix: load({ p99: 25 }) });
    expect(byName(slow, 200_000)['uncached mix p99 (ms)']?.pass).toBe(false);
    expect(byName(slow, 1_000_000)['uncached mix p99 (ms)']?.pass).toBe(true);
  });

  it('holds the open-loop mix to the same p99 target, apart from the saturated run', () => {
    const r = results({ mix: load({ p99: 90 }), mixAtRate: { ...load({ p99: 12 }), rate: 500 } });
    const targets = byName(r, 200_000);
    expect(targets['uncached mix p99 (ms)']?.pass).toBe(false);
    expect(targets['uncached mix p99 at 500 req/s (ms)']).toEqual({
      name: 'uncached mix p99 at 500 req/s (ms)',
      target: '≤ 20',
      value: 12,
      pass: true,
    });
  });

  it('fails service RSS above 300 MB and reports n/a when it could not be measured', () => {
    const big = results({ service: { idleRssBytes: null, peakRssBytes: 300_000_001 } });
    expect(byName(big, 1_000_000)['service peak RSS (MB)']?.pass).toBe(false);
    const unknown = results({ service: { idleRssBytes: null, peakRssBytes: null } });
    expect(byName(unknown, 1_000_000)['service peak RSS (MB)']).toMatchObject({ value: null, pass: null });
  });

  it('judges the Redis cost only when Redis ran', () => {
    const costly = results({
      redis: {
        version: '7',
        memory: load(),
        redis: load(),
        cost: 0.2,
        requestsPerCall: null,
        redisCpuUsPerRequest: null,
      },
    });
    expect(byName(costly, 200_000)['Redis store cost vs memory store']?.pass).toBe(false);
    const skipped = results({ redis: { skipped: 'redis-server not found on PATH' } });
    expect(byName(skipped, 200_000)['Redis store cost vs memory store']?.pass).toBeNull();
  });
});

describe('failures', () => {
  it('reports every run with failed requests, with its status codes', () => {
    const r = results({
      mix: load({ non2xx: 12, statuses: { '200': 99_988, '404': 10, '500': 2 } }),
      byKind: { v1: load({ errors: 3, timeouts: 1 }) },
    });
    expect(failures(r)).toEqual([
      'uncached mix: 12 non-2xx (10× 404, 2× 500), 0 errors, 0 timeouts of 100000 requests',
      'mix kind v1: 0 non-2xx, 3 errors, 1 timeouts of 100000 requests',
    ]);
    expect(byName(r, 200_000)['runs with failed requests']).toMatchObject({ value: 2, pass: false });
  });
});

describe('table', () => {
  it('prints the machine, every measure and every target with its verdict', () => {
    const r = results({ ratio: 0.5, mix: load({ p99: 40, non2xx: 5, statuses: { '200': 10, '503': 5 } }) });
    const report: BenchReport = {
      machine: machine(new Date('2026-01-02T03:04:05Z')),
      config: {
        count: 200_000,
        seed: 1,
        duration: 10,
        connections: 50,
        quick: false,
        mixPaths: 100_000,
        idPaths: 100_000,
      },
      results: r,
      targets: evaluate(r, 200_000),
      failures: failures(r),
    };
    const text = table(report);
    expect(text).toContain('2026-01-02T03:04:05.000Z');
    expect(text).toContain('| GET /quotes: service / bare Fastify | 0.50 | ≥ 0.70 | **FAIL** |');
    expect(text).toContain('| uncached mix p99 (ms) | 40 | ≤ 20 | **FAIL** |');
    expect(text).toContain('| Redis store cost vs memory store | 10.0% | ≤ 15% | pass |');
    expect(text).toContain(
      '| uncached mix (100,000 distinct paths), 50 connections flat out | 10,000 req/s, p50 4 ms, p99 40 ms, **5 failed** |',
    );
    expect(text).toContain('mix kind `like` alone');
    expect(text).toContain('- uncached mix: 5 non-2xx (5× 503)');
    expect(text).toContain(
      '| Redis store: requests per script call, redis-server CPU per request | 44.6, 0.93 µs |',
    );
  });

  it('says n/a for what Redis or the system did not report, and one line when Redis did not run', () => {
    const base = {
      machine: machine(new Date('2026-01-02T03:04:05Z')),
      config: { count: 1000, seed: 1, duration: 1, connections: 5, quick: true, mixPaths: 10, idPaths: 10 },
      failures: [],
    };
    const unknown = results({
      redis: {
        version: '7',
        memory: load(),
        redis: load(),
        cost: 0,
        requestsPerCall: null,
        redisCpuUsPerRequest: null,
      },
    });
    expect(table({ ...base, results: unknown, targets: evaluate(unknown, 1000) })).toContain(
      '| Redis store: requests per script call, redis-server CPU per request | n/a, n/a |',
    );
    const skipped = results({ redis: { skipped: 'disabled with --no-redis' } });
    const text = table({ ...base, results: skipped, targets: evaluate(skipped, 1000) });
    expect(text).toContain('| rate limit store: Redis | skipped: disabled with --no-redis |');
    expect(text).not.toContain('requests per script call');
  });
});
