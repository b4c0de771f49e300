import { describe, expect, it } from 'vitest';
import { checks, formatValue, type SummaryData, summaryOutputs, thresholds } from './summary.ts';

/** k6's handleSummary argument, shaped as k6 passes it (root group with nested groups). */
function data(thresholdOk: boolean): SummaryData {
  return {
    state: { testRunDurationMs: 61_234 },
    root_group: {
      name: '',
      path: '',
      checks: [{ name: 'status is 200', path: '::status is 200', passes: 990, fails: 10 }],
      groups: [
        {
          name: 'errors',
          path: '::errors',
          groups: [],
          checks: [{ name: '404 not_found', path: '::errors::404 not_found', passes: 1, fails: 0 }],
        },
      ],
    },
    metrics: {
      http_req_duration: {
        type: 'trend',
        contains: 'time',
        values: { avg: 3.25, 'p(95)': 8.5, 'p(99)': 14 },
        thresholds: { 'p(95)<100': { ok: true }, 'p(99)<10': { ok: thresholdOk } },
      },
      http_req_failed: { type: 'rate', contains: 'default', values: { rate: 0.01, passes: 10, fails: 990 } },
      http_reqs: { type: 'counter', contains: 'default', values: { count: 1000, rate: 16.33 } },
      http_req_waiting: { type: 'trend', contains: 'time', values: { avg: 3 } },
      data_received: { type: 'counter', contains: 'data', values: { count: 3 * 1024 * 1024, rate: 51_200 } },
    },
  };
}

const context = {
  script: 'throughput',
  title: 'constant arrival rate',
  dir: 'loadtest/results',
  settings: { rate: '50 req/s' },
  findings: { drift: '1.10' },
};

describe('summaryOutputs', () => {
  it('writes stdout, <dir>/<script>.json and <dir>/<script>.md', () => {
    const out = summaryOutputs(data(true), context);
    expect(Object.keys(out).sort()).toEqual([
      'loadtest/results/throughput.json',
      'loadtest/results/throughput.md',
      'stdout',
    ]);
  });

  it('says PASS only when every threshold held, in all three outputs', () => {
    const pass = summaryOutputs(data(true), context);
    const fail = summaryOutputs(data(false), context);
    expect(pass.stdout).toContain('result: PASS (run 61.2 s)');
    expect(fail.stdout).toContain('result: FAIL');
    expect(fail.stdout).toContain('✗ http_req_duration p(99)<10');
    expect(pass['loadtest/results/throughput.md']).toMatch(/^# k6 throughput: PASS/);
    expect(fail['loadtest/results/throughput.md']).toContain('| http_req_duration | `p(99)<10` | FAIL |');
    const json = JSON.parse(fail['loadtest/results/throughput.json'] as string);
    expect(json.passed).toBe(false);
    expect(json.settings).toEqual({ rate: '50 req/s' });
    expect(json.findings).toEqual({ drift: '1.10' });
    expect(json.metrics.http_req_waiting.values.avg).toBe(3);
  });

  it('lists checks of nested groups with their pass rate, and findings', () => {
    const { stdout } = summaryOutputs(data(true), context);
    expect(stdout).toContain('✗ status is 200: 99.00% (990/1000)');
    expect(stdout).toContain('✓ errors › 404 not_found: 100.00% (1/1)');
    expect(stdout).toContain('drift: 1.10');
    // Sub-timings stay in the JSON only.
    expect(stdout).not.toContain('http_req_waiting');
    expect(stdout).toContain('http_req_duration: avg=3.25 ms p(95)=8.50 ms p(99)=14 ms');
  });
});

describe('thresholds and checks', () => {
  it('flatten k6 data, whether groups come as arrays or objects', () => {
    const d = data(false);
    d.root_group.groups = { errors: (d.root_group.groups as never[])[0] as never };
    expect(checks(d).map((c) => c.name)).toEqual(['status is 200', 'errors › 404 not_found']);
    expect(thresholds(d)).toEqual([
      { metric: 'http_req_duration', expression: 'p(95)<100', ok: true },
      { metric: 'http_req_duration', expression: 'p(99)<10', ok: false },
    ]);
  });
});

describe('formatValue', () => {
  it('shows time in ms, data in bytes, rates in percent and counter rates per second', () => {
    const trend = { type: 'trend', contains: 'time', values: {} } as const;
    const rate = { type: 'rate', contains: 'default', values: {} } as const;
    const bytes = { type: 'counter', contains: 'data', values: {} } as const;
    const counter = { type: 'counter', contains: 'default', values: {} } as const;
    expect(formatValue(trend, 'p(95)', 12.345)).toBe('12.35 ms');
    expect(formatValue(rate, 'rate', 0.0123)).toBe('1.23%');
    expect(formatValue(bytes, 'count', 2048)).toBe('2.0 KiB');
    expect(formatValue(counter, 'rate', 16.333)).toBe('16.33/s');
  });
});
