/**
 * The benchmark's report: machine details, the performance targets with pass/fail, the
 * markdown table printed at the end (its figures kept in docs/benchmarks.md), and the JSON written to
 * loadtest/results/latest.json.
 */

import { cpus, release, totalmem } from 'node:os';
import type { MixKind } from '../lib/mix.ts';
import { FACETS_P99_MS } from './facets.ts';
import type { LoadResult } from './load.ts';
import type { SearchResults } from './search.ts';

/** Where and with what the benchmark ran. */
export interface Machine {
  cpuModel: string;
  cpuCount: number;
  memoryBytes: number;
  node: string;
  platform: string;
  date: string;
}

/** The command line, resolved. */
export interface BenchConfig {
  count: number;
  seed: number;
  /** Seconds per measured run. */
  duration: number;
  connections: number;
  quick: boolean;
  /** Distinct paths of the uncached mix, and of the by-id run. */
  mixPaths: number;
  idPaths: number;
  /** Requests per second of the open-loop mix run. */
  mixRate?: number;
}

/** The Redis-store comparison, or why it did not run. */
export type RedisResult =
  | {
      version: string;
      /** `GET /quotes` with the in-memory store, measured right before the Redis run. */
      memory: LoadResult;
      redis: LoadResult;
      /** 1 - redis req/s / memory req/s: the share of throughput the shared store costs. */
      cost: number;
      /**
       * Requests counted per script call during the Redis run: each call is one round trip,
       * which is what the store costs. Null when Redis did not report its calls.
       */
      requestsPerCall: number | null;
      /** redis-server's own CPU time per Redis-store request, in µs; null without /proc. */
      redisCpuUsPerRequest: number | null;
    }
  | { skipped: string };

/** Everything measured. */
export interface BenchResults {
  catalogue: { count: number; bytes: number; generateSeconds: number | null };
  indexing: { seconds: number; peakRssBytes: number | null };
  /** `GET /quotes` on the bare Fastify route returning the same body. */
  bare: LoadResult;
  /** `GET /quotes` on the service, Basic auth. */
  serviceQuotes: LoadResult;
  /** serviceQuotes.rps / bare.rps. */
  ratio: number;
  /** The mix with every connection sending as fast as it is answered: throughput at saturation. */
  mix: LoadResult;
  /** The mix at a fixed arrival rate (open loop): latency under a sustained load. */
  mixAtRate?: LoadResult & { rate: number };
  /** Each kind of the mix on its own (shorter runs): where the mix's latency comes from. */
  byKind: Partial<Record<MixKind, LoadResult>>;
  /** Range filters, `/quotes/random?count=50` and `/quotes/today`, each alone (distinct paths). */
  features?: Partial<Record<string, LoadResult>>;
  byId: LoadResult;
  /** Unfiltered `/quotes/facets`, every request distinct (uncached). */
  facets?: LoadResult;
  /** `/authors?sort=quote_count&order=desc` and `/authors/{id}`, each alone. */
  authors?: { top: LoadResult; byId: LoadResult };
  /** Full-text search (`q`), distinct uncached searches of 1 to 3 words. */
  search?: SearchResults;
  service: { idleRssBytes: number | null; peakRssBytes: number | null };
  redis: RedisResult;
}

/** One target and how this run fared. */
export interface TargetResult {
  name: string;
  /** The rule, as printed (`≥ 0.70`). */
  target: string;
  value: number | null;
  /** null when the measure did not run (e.g. no redis-server). */
  pass: boolean | null;
}

/** The JSON written to latest.json. */
export interface BenchReport {
  machine: Machine;
  config: BenchConfig;
  results: BenchResults;
  targets: TargetResult[];
  /** Runs with failed requests, each with its status counts: a run with errors is reported. */
  failures: string[];
}

/** The performance targets. The mix p99 target is 20 ms up to 200k quotes and 30 ms above. */
export const TARGETS = {
  ratio: 0.7,
  mixP99SmallMs: 20,
  mixP99LargeMs: 30,
  largeCatalogue: 200_000,
  serviceRssBytes: 300_000_000,
  redisCost: 0.15,
} as const;

export function machine(now: Date = new Date()): Machine {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cpuCount: cpu.length,
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform} ${release()} ${process.arch}`,
    date: now.toISOString(),
  };
}

/** The mix p99 target for a catalogue of `count` quotes. */
export function mixP99Target(count: number): number {
  return count > TARGETS.largeCatalogue ? TARGETS.mixP99LargeMs : TARGETS.mixP99SmallMs;
}

/** Failed requests of every run, one line per run that had any. */
export function failures(results: BenchResults): string[] {
  const runs: [string, LoadResult][] = [
    ['bare GET /quotes', results.bare],
    ['service GET /quotes', results.serviceQuotes],
    ['uncached mix', results.mix],
    ...(results.mixAtRate === undefined
      ? []
      : [['uncached mix at a fixed rate', results.mixAtRate] as [string, LoadResult]]),
    ['by id', results.byId],
    ...(results.facets === undefined ? [] : [['unfiltered facets', results.facets] as [string, LoadResult]]),
    ...Object.entries(results.byKind).map(([kind, r]) => [`mix kind ${kind}`, r] as [string, LoadResult]),
    ...Object.entries(results.features ?? {}).map(([kind, r]) => [kind, r] as [string, LoadResult]),
  ];
  if ('memory' in results.redis) {
    runs.push(
      ['memory store GET /quotes', results.redis.memory],
      ['redis store GET /quotes', results.redis.redis],
    );
  }
  const out: string[] = [];
  for (const [name, r] of runs) {
    const failed = r.non2xx + r.errors;
    if (failed === 0 && r.timeouts === 0) continue;
    const statuses = Object.entries(r.statuses)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${n}× ${code}`)
      .join(', ');
    out.push(
      `${name}: ${r.non2xx} non-2xx${statuses === '' ? '' : ` (${statuses})`}, ${r.errors} errors, ${r.timeouts} timeouts of ${r.requests} requests`,
    );
  }
  return out;
}

/** Evaluates the targets against the results. */
export function evaluate(results: BenchResults, count: number): TargetResult[] {
  const p99Target = mixP99Target(count);
  const rss = results.service.peakRssBytes;
  const failed = failures(results).length;
  return [
    {
      name: 'GET /quotes: service / bare Fastify',
      target: `≥ ${TARGETS.ratio.toFixed(2)}`,
      value: results.ratio,
      pass: results.ratio >= TARGETS.ratio,
    },
    {
      name: 'uncached mix p99 (ms)',
      target: `≤ ${p99Target}`,
      value: results.mix.p99,
      pass: results.mix.p99 <= p99Target,
    },
    ...(results.mixAtRate === undefined
      ? []
      : [
          {
            name: `uncached mix p99 at ${results.mixAtRate.rate} req/s (ms)`,
            target: `≤ ${p99Target}`,
            value: results.mixAtRate.p99,
            pass: results.mixAtRate.p99 <= p99Target,
          },
        ]),
    ...(results.facets === undefined
      ? []
      : [
          {
            name: 'unfiltered facets, uncached: p99 (ms)',
            target: `≤ ${FACETS_P99_MS}`,
            value: results.facets.p99,
            pass: results.facets.p99 <= FACETS_P99_MS,
          },
        ]),
    {
      name: 'service peak RSS (MB)',
      target: `≤ ${TARGETS.serviceRssBytes / 1e6}`,
      value: rss === null ? null : rss / 1e6,
      pass: rss === null ? null : rss <= TARGETS.serviceRssBytes,
    },
    'cost' in results.redis
      ? {
          name: 'Redis store cost vs memory store',
          target: `≤ ${TARGETS.redisCost * 100}%`,
          value: results.redis.cost,
          pass: results.redis.cost <= TARGETS.redisCost,
        }
      : {
          name: 'Redis store cost vs memory store',
          target: `≤ ${TARGETS.redisCost * 100}%`,
          value: null,
          pass: null,
        },
    { name: 'runs with failed requests', target: '0', value: failed, pass: failed === 0 },
  ];
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

function mb(bytes: number | null): string {
  return bytes === null ? 'n/a' : `${(bytes / 1e6).toFixed(0)} MB`;
}

function run(r: LoadResult): string {
  const failed = r.non2xx + r.errors + r.timeouts;
  return `${int.format(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms${failed > 0 ? `, **${failed} failed**` : ''}`;
}

/** What the Redis run's round trips amounted to: the mechanism behind the store's cost. */
function roundTrips(r: { requestsPerCall: number | null; redisCpuUsPerRequest: number | null }): string {
  const perCall = r.requestsPerCall === null ? 'n/a' : r.requestsPerCall.toFixed(1);
  const cpu = r.redisCpuUsPerRequest === null ? 'n/a' : `${r.redisCpuUsPerRequest.toFixed(2)} µs`;
  return `${perCall}, ${cpu}`;
}

function verdict(pass: boolean | null): string {
  return pass === null ? 'n/a' : pass ? 'pass' : '**FAIL**';
}

function shown(t: TargetResult): string {
  if (t.value === null) return 'n/a';
  if (t.name.startsWith('Redis')) return `${(t.value * 100).toFixed(1)}%`;
  if (t.name.startsWith('GET')) return t.value.toFixed(2);
  return Number.isInteger(t.value) ? String(t.value) : t.value.toFixed(1);
}

/** The markdown table of a report: measures first, then the targets. */
/** Table rows of the full-text search runs (both backends). */
export function searchRows(search: SearchResults | undefined, connections: number): string[] {
  if (search === undefined) return [];
  const rows = [
    `| q, 1 to 3 words, distinct uncached (${int.format(search.paths)} paths), 10 connections | ${run(search.at10)} |`,
    `| q, 1 to 3 words, distinct uncached, ${connections} connections | ${run(search.atConnections)} |`,
  ];
  if (search.replay !== undefined) {
    rows.push(
      `| q: the same engine requests replayed, 10 connections (${(search.requestsPerAnswer ?? 0).toFixed(2)} per answer) | ${run(search.replay)} |`,
      `| q: service answers/s ÷ replayed answers/s (engine requests/s ÷ requests per answer) | ${(search.at10.rps / (search.replay.rps / (search.requestsPerAnswer ?? 1))).toFixed(2)} |`,
    );
  }
  return rows;
}

export function table(report: BenchReport): string {
  const { results: r, config: c, machine: m } = report;
  const lines = [
    `Machine: ${m.cpuCount} × ${m.cpuModel}, ${mb(m.memoryBytes)} RAM, Node ${m.node}, ${m.platform}; ${m.date}`,
    `Config: ${int.format(c.count)} quotes, ${c.connections} connections, ${c.duration} s per run${c.quick ? ' (quick)' : ''}`,
    '',
    '| measure | result |',
    '| --- | --- |',
    `| catalogue | ${int.format(r.catalogue.count)} quotes, ${mb(r.catalogue.bytes)} NDJSON${r.catalogue.generateSeconds === null ? ' (cached)' : `, generated in ${r.catalogue.generateSeconds.toFixed(1)} s`} |`,
    `| indexing | ${r.indexing.seconds.toFixed(1)} s, peak RSS ${mb(r.indexing.peakRssBytes)} |`,
    `| GET /quotes, bare Fastify | ${run(r.bare)} |`,
    `| GET /quotes, service (Basic auth) | ${run(r.serviceQuotes)} |`,
    `| uncached mix (${int.format(c.mixPaths)} distinct paths), ${c.connections} connections flat out | ${run(r.mix)} |`,
    ...(r.mixAtRate === undefined
      ? []
      : [
          `| uncached mix, open loop at ${int.format(r.mixAtRate.rate)} req/s (other distinct paths) | ${run(r.mixAtRate)} |`,
        ]),
    ...Object.entries(r.byKind).map(([kind, k]) => `| &nbsp;&nbsp;mix kind \`${kind}\` alone | ${run(k)} |`),
    ...Object.entries(r.features ?? {}).map(
      ([kind, k]) => `| \`${kind}\` alone (distinct paths) | ${run(k as LoadResult)} |`,
    ),
    `| by id (${int.format(c.idPaths)} random ids) | ${run(r.byId)} |`,
    ...(r.facets === undefined ? [] : [`| unfiltered facets, each request distinct | ${run(r.facets)} |`]),
    ...searchRows(r.search, c.connections),
    `| service RSS idle / peak | ${mb(r.service.idleRssBytes)} / ${mb(r.service.peakRssBytes)} |`,
    ...('memory' in r.redis
      ? [
          `| rate limit store: memory / Redis ${r.redis.version} | ${run(r.redis.memory)} / ${run(r.redis.redis)} |`,
          `| Redis store: requests per script call, redis-server CPU per request | ${roundTrips(r.redis)} |`,
        ]
      : [`| rate limit store: Redis | skipped: ${r.redis.skipped} |`]),
    '',
    '| target | value | rule | result |',
    '| --- | --- | --- | --- |',
    ...report.targets.map((t) => `| ${t.name} | ${shown(t)} | ${t.target} | ${verdict(t.pass)} |`),
  ];
  if (report.failures.length > 0) {
    lines.push('', 'Failed requests:', ...report.failures.map((f) => `- ${f}`));
  }
  return `${lines.join('\n')}\n`;
}
