/**
 * Runs a k6 script under the harness (see register.ts): setup(), K6_SHIM_ITERATIONS iterations
 * of the default function (default 1; arrival rates and durations are not emulated), then
 * handleSummary() with summary data shaped as k6's, thresholds evaluated on the samples.
 * Exit codes as k6's: 0, 99 when a threshold failed, 107 when setup() threw.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCommandLine, type UsageError } from '../../service/command-line.ts';
import { checks, context, declare, groupStack, type MetricRecord, metrics, type Sample } from './state.ts';

declare global {
  var __ENV: Record<string, string | undefined>;
  var __VU: number;
  var __ITER: number;
}
globalThis.__ENV = { ...process.env };
globalThis.__VU = 1;
globalThis.__ITER = 0;

interface Script {
  options?: {
    scenarios?: Record<string, { exec?: string }>;
    thresholds?: Record<string, string[]>;
    summaryTrendStats?: string[];
  };
  setup?: () => unknown;
  default: (data: unknown) => void;
  [exec: string]: unknown;
  handleSummary?: (data: unknown) => Record<string, string>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (rank - lo);
}

function values(record: MetricRecord, samples: Sample[], seconds: number): Record<string, number> {
  const v = samples.map((s) => s.value);
  const sum = v.reduce((a, b) => a + b, 0);
  switch (record.type) {
    case 'counter':
      return { count: sum, rate: sum / seconds };
    case 'gauge':
      return { value: v.at(-1) ?? 0, min: Math.min(...v), max: Math.max(...v) };
    case 'rate':
      return { rate: v.length === 0 ? 0 : sum / v.length, passes: sum, fails: v.length - sum };
    case 'trend': {
      const sorted = [...v].sort((a, b) => a - b);
      return {
        count: v.length,
        avg: v.length === 0 ? 0 : sum / v.length,
        min: sorted[0] ?? 0,
        med: percentile(sorted, 50),
        max: sorted.at(-1) ?? 0,
        'p(90)': percentile(sorted, 90),
        'p(95)': percentile(sorted, 95),
        'p(99)': percentile(sorted, 99),
      };
    }
  }
}

function holds(expression: string, stats: Record<string, number>): boolean {
  const m = /^\s*([a-z]+(?:\([0-9.]+\))?)\s*(<=|>=|==|!=|<|>)\s*([0-9.eE+-]+)\s*$/.exec(expression);
  if (m === null) throw new Error(`harness: cannot evaluate threshold '${expression}'`);
  const actual = stats[m[1] as string] ?? 0;
  const bound = Number(m[3]);
  switch (m[2]) {
    case '<':
      return actual < bound;
    case '<=':
      return actual <= bound;
    case '>':
      return actual > bound;
    case '>=':
      return actual >= bound;
    case '==':
      return actual === bound;
    default:
      return actual !== bound;
  }
}

function summary(script: Script, seconds: number) {
  const out: Record<string, object> = {};
  for (const [name, record] of metrics) {
    // As in k6, a metric that never got a sample is left out (unless a threshold names it).
    if (record.samples.length === 0) continue;
    out[name] = {
      type: record.type,
      contains: record.contains,
      values: values(record, record.samples, seconds),
    };
  }
  let allOk = true;
  for (const [key, expressions] of Object.entries(script.options?.thresholds ?? {})) {
    const [, name, filter] = /^([^{]+)(?:\{(.*)\})?$/.exec(key) ?? [];
    const record = metrics.get(name as string) ?? { type: 'trend', contains: 'default', samples: [] };
    const wanted = (filter ?? '')
      .split(',')
      .filter((f) => f !== '')
      .map((f) => f.split(':') as [string, string]);
    const samples = record.samples.filter((s) => wanted.every(([k, v]) => s.tags[k] === v));
    const stats = values(record as MetricRecord, samples, seconds);
    const thresholds: Record<string, { ok: boolean }> = {};
    for (const expression of expressions) {
      const ok = holds(expression, stats);
      allOk &&= ok;
      thresholds[expression] = { ok };
    }
    out[key] = { type: record.type, contains: record.contains, values: stats, thresholds };
  }
  const groups = [...checks.entries()].filter(([path]) => path !== '');
  return {
    allOk,
    data: {
      state: { testRunDurationMs: seconds * 1000, isStdOutTTY: false, isStdErrTTY: false },
      metrics: out,
      root_group: {
        name: '',
        path: '',
        checks: checks.get('') ?? [],
        groups: groups.map(([path, list]) => ({
          name: path.split('::').at(-1),
          path,
          groups: [],
          checks: list,
        })),
      },
    },
  };
}

const USAGE = 'usage: node --import ./loadtest/k6-shim/register.ts loadtest/k6-shim/run.ts <script.ts>';
let file: string | undefined;
try {
  file = parseCommandLine(process.argv.slice(2), {}, 1).positionals[0];
} catch (error) {
  process.stderr.write(`${(error as UsageError).message}\n`);
}
if (file === undefined) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
// k6's built-in metrics exist (with their types) whether or not the script emits them.
declare('checks', 'rate');
declare('http_reqs', 'counter');
declare('http_req_failed', 'rate');
declare('http_req_duration', 'trend', 'time');
declare('dropped_iterations', 'counter');
declare('iterations', 'counter');

const script = (await import(pathToFileURL(resolve(file)).href)) as Script;
const scenarios = Object.entries(script.options?.scenarios ?? { default: {} });
context.scenario = scenarios.find(([, s]) => s.exec === undefined || s.exec === 'default')?.[0] ?? 'default';
const began = Date.now();
context.startTime = began;
let data: unknown;
try {
  data = script.setup?.();
} catch (error) {
  process.stderr.write(`setup() failed: ${(error as Error).message}\n`);
  process.exit(107);
}
const iterations = Number(process.env.K6_SHIM_ITERATIONS ?? 1);
// K6_SHIM_EXEC=name runs another exported scenario function (e.g. soak's `probe`) instead.
const exec = process.env.K6_SHIM_EXEC ?? 'default';
const iteration = script[exec];
if (typeof iteration !== 'function') throw new Error(`harness: the script exports no function '${exec}'`);
for (let i = 0; i < iterations; i++) {
  globalThis.__ITER = i;
  try {
    (iteration as (data: unknown) => void)(data);
    declare('iterations', 'counter').samples.push({ value: 1, tags: { scenario: context.scenario } });
  } catch (error) {
    groupStack.length = 0;
    process.stderr.write(`iteration ${i} failed: ${(error as Error).message}\n`);
  }
}
const { allOk, data: summaryData } = summary(script, Math.max((Date.now() - began) / 1000, 0.001));
for (const [target, content] of Object.entries(script.handleSummary?.(summaryData) ?? {})) {
  if (target === 'stdout') process.stdout.write(content);
  else if (target === 'stderr') process.stderr.write(content);
  else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
}
process.exit(allOk ? 0 : 99);
