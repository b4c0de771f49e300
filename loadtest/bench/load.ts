/**
 * One load run with autocannon (programmatic API), reduced to the numbers the benchmark reports.
 * Failed requests are counted, never dropped: a run with errors is a finding, not a number.
 */
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';

/** What one run measured. Latencies in milliseconds (autocannon's resolution: 1 ms). */
export interface LoadResult {
  /** Completed requests per second, averaged over the run. */
  rps: number;
  p50: number;
  p99: number;
  /** The slowest request (set by {@link measure}). */
  max?: number;
  mean: number;
  /** Requests completed. */
  requests: number;
  /** Responses with a status outside 2xx. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  /** Count per status code, e.g. { "200": 12000 }. */
  statuses: Record<string, number>;
  seconds: number;
}

/** A request other than a plain GET: a recorded engine request, replayed as it was sent. */
export interface RequestSpec {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

/** A load run: each path (a GET) or request to `baseUrl` in turn (all connections share one cursor). */
export interface LoadSpec {
  baseUrl: string;
  /** Paths with query strings, or whole requests; cycled in order, so a list longer than the run never repeats. */
  paths: readonly (string | RequestSpec)[];
  headers?: Record<string, string>;
  connections: number;
  /** Seconds of the measured run. */
  duration: number;
  /** A fixed number of requests instead of `duration` (short smoke runs). */
  amount?: number;
  /** Requests sent before the measured run, whose numbers are thrown away. */
  warmup?: number;
  /**
   * Where in `paths` the run starts, moved on by every request it sends: runs that share one go
   * on through the list where the last stopped instead of asking its first paths again.
   */
  cursor?: { at: number };
}

function options(spec: LoadSpec, limit: { duration: number } | { amount: number }): autocannon.Options {
  const cursor = spec.cursor ?? { at: 0 };
  const paths = spec.paths;
  if (paths.length === 0) throw new Error('a load run needs at least one path');
  const first = paths[0] as string | RequestSpec;
  return {
    url: `${spec.baseUrl}${typeof first === 'string' ? first : first.path}`,
    connections: spec.connections,
    pipelining: 1,
    timeout: 10,
    headers: spec.headers,
    ...limit,
    // autocannon notices the end of an `amount` run only at its next sample tick (1 s by default).
    sampleInt: 'amount' in limit ? 50 : 1000,
    requests:
      paths.length === 1 && typeof first === 'string'
        ? [{ method: 'GET' }]
        : [
            {
              method: 'GET',
              setupRequest: (request) => {
                const next = paths[cursor.at % paths.length] as string | RequestSpec;
                cursor.at = (cursor.at + 1) % paths.length;
                if (typeof next === 'string') return { ...request, path: next };
                return {
                  ...request,
                  method: next.method as 'GET',
                  path: next.path,
                  body: next.body,
                  headers: { ...request.headers, ...next.headers },
                };
              },
            },
          ],
  };
}

/** Runs the warm-up (if any), then the measured run. */
export async function measure(spec: LoadSpec): Promise<LoadResult> {
  if (spec.warmup !== undefined && spec.warmup > 0) {
    await autocannon(options(spec, { amount: spec.warmup }));
  }
  const began = performance.now();
  const limit = spec.amount === undefined ? { duration: spec.duration } : { amount: spec.amount };
  // Without a callback autocannon returns its run's event emitter, made thenable; the types
  // know only the promise.
  const run = autocannon(options(spec, limit)) as Promise<autocannon.Result> & EventEmitter;
  const latencies: number[] = [];
  run.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
  });
  const result = await run;
  const seconds = (performance.now() - began) / 1000;
  const statuses: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statuses[code] = stats.count ?? 0;
  }
  const requests = result.requests.total;
  const measured: LoadResult = {
    // autocannon rounds a run stopped by `amount` up to its 1 s sampling tick: trust the wall clock then.
    rps: requests / Math.max(Math.min(result.duration, seconds), 0.001),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.average,
    requests,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    seconds,
  };
  LATENCIES.set(measured, latencies);
  return measured;
}

/**
 * The response time of every request of a run, kept beside its result rather than in it (a
 * result is written to the report as it is): {@link combine} reads the percentiles of several
 * runs from them.
 */
const LATENCIES = new WeakMap<LoadResult, readonly number[]>();

/** The `fraction` percentile of sorted `values`, rounded to autocannon's 1 ms resolution. */
function percentile(sorted: readonly number[], fraction: number): number {
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return Math.round(sorted[at] as number);
}

/** True when every request of the run completed with a 2xx status. */
export function clean(result: LoadResult): boolean {
  return result.non2xx === 0 && result.errors === 0 && result.timeouts === 0;
}

/**
 * Two loads measured in turns of about `sliceSeconds` each over `first.duration`, after the
 * warm-up of each: a drift of the shared machine (other work, CPU frequency) falls on both alike
 * instead of on one of two runs taken one after the other. The order swaps every turn (first,
 * second, second, first, …) over an even number of turns, so that neither load is always the one
 * measured just after the other: a steady drift, and whatever one load leaves behind for the next
 * (a process that has just gone idle), fall on both sides equally.
 */
export async function measureInTurns(
  first: LoadSpec,
  second: LoadSpec,
  sliceSeconds = 1,
  around: (side: 0 | 1, run: () => Promise<LoadResult>) => Promise<LoadResult> = (_side, run) => run(),
): Promise<[LoadResult, LoadResult]> {
  const [a, b] = await measureEachInTurns([first, second], sliceSeconds, (side, run) =>
    around(side as 0 | 1, run),
  );
  return [a as LoadResult, b as LoadResult];
}

/**
 * {@link measureInTurns} for any number of loads: each turn measures every load once, in the
 * order of `loads` and then in reverse (A B C, C B A, …), over an even number of turns of about
 * `sliceSeconds` each, for `loads[0].duration` in all per load.
 */
export async function measureEachInTurns(
  loads: readonly LoadSpec[],
  sliceSeconds = 1,
  around: (side: number, run: () => Promise<LoadResult>) => Promise<LoadResult> = (_side, run) => run(),
): Promise<LoadResult[]> {
  const first = loads[0];
  if (first === undefined) throw new Error('nothing to measure');
  // Whole seconds by default: a run of autocannon ends on its next 1 s sample tick anyway.
  const turns = 2 * Math.max(1, Math.round(first.duration / (2 * sliceSeconds)));
  // Each side goes on through its paths from slice to slice: a list of distinct paths stays
  // distinct across the turns (an answer cache never sees a path twice).
  const cursors = loads.map((load) => load.cursor ?? { at: 0 });
  const slice = (side: number): LoadSpec => ({
    ...(loads[side] as LoadSpec),
    duration: (loads[side] as LoadSpec).duration / turns,
    warmup: undefined,
    cursor: cursors[side],
  });
  const sides = loads.map((_, side) => side);
  for (const side of sides) {
    const warmup = loads[side]?.warmup;
    if (warmup !== undefined && warmup > 0) await measure({ ...slice(side), amount: warmup });
  }
  const slices: LoadResult[][] = loads.map(() => []);
  for (let i = 0; i < turns; i++) {
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      slices[side]?.push(await around(side, () => measure(slice(side))));
    }
  }
  return slices.map(combine);
}

/**
 * One result from several runs of the same load (slices taken in turns with another): req/s over
 * the summed time, percentiles of every request of the runs together, counts summed. For runs
 * measured elsewhere, whose response times are unknown here, the median of their p50 and the
 * worst p99 (percentiles do not add up, so the p99 errs on the slow side).
 */
export function combine(runs: readonly LoadResult[]): LoadResult {
  if (runs.length === 0) throw new Error('nothing to combine');
  const sum = (pick: (r: LoadResult) => number) => runs.reduce((total, r) => total + pick(r), 0);
  const requests = sum((r) => r.requests);
  const seconds = sum((r) => r.seconds);
  const busy = sum((r) => r.requests / Math.max(r.rps, 1e-9));
  const statuses: Record<string, number> = {};
  for (const r of runs) {
    for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  }
  const p50s = runs.map((r) => r.p50).sort((a, b) => a - b);
  const times = runs.map((r) => LATENCIES.get(r));
  const all = times.every((t) => t !== undefined && t.length > 0)
    ? (times as (readonly number[])[]).flat().sort((a, b) => a - b)
    : undefined;
  const combined: LoadResult = {
    rps: requests / Math.max(busy, 1e-9),
    p50: all === undefined ? (p50s[Math.floor((p50s.length - 1) / 2)] as number) : percentile(all, 0.5),
    p99: all === undefined ? Math.max(...runs.map((r) => r.p99)) : percentile(all, 0.99),
    mean: sum((r) => r.mean * r.requests) / Math.max(requests, 1),
    requests,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statuses,
    seconds,
  };
  const maxima = runs.map((r) => r.max).filter((max) => max !== undefined);
  if (maxima.length > 0) combined.max = Math.max(...maxima);
  if (all !== undefined) LATENCIES.set(combined, all);
  return combined;
}
