/**
 * The report of `npm run bench -- --backend meilisearch`: what was measured, the production
 * path's targets with pass/fail, and the markdown table whose figures docs/benchmarks.md keeps.
 */
import { FACETS_P99_MS } from './facets.ts';
import type { LoadResult } from './load.ts';
import { type BenchConfig, type Machine, searchRows, type TargetResult } from './report.ts';
import type { SearchResults } from './search.ts';

export interface MeiliResults {
  engine: {
    version: string;
    rssAfterIndexingBytes: number | null;
    /** Over the whole run, the 50-connection mix and replay included. */
    peakRssBytes: number | null;
    /** While deep pages were served, one at a time and 50 at once. */
    deepPeakRssBytes: number | null;
  };
  catalogue: { count: number; bytes: number };
  /** The indexer, through its scoped key, including settings, validation and the swap (null: an engine directory reused). */
  indexing: { seconds: number; peakRssBytes: number | null } | null;
  /** The same documents posted straight to the engine, settings first, two tasks in flight. */
  directIngestionSeconds: number | null;
  /** `total_quotes` of `GET /quotes` with no filter. */
  totalQuotes: number;
  /** The uncached mix through the service. */
  mix?: LoadResult;
  /** The engine requests the service sent for the mix, replayed straight at the engine. */
  replay?: LoadResult;
  /**
   * The same engine requests through a bare forwarder (bench/forwarder.ts), in turns with the
   * service and the replay: what a hop in front of the engine costs, whatever it does.
   */
  forwarder?: LoadResult;
  /** Engine requests per answer of the service, as recorded. */
  requestsPerAnswer?: number;
  /** Deep and past-the-end pages, one request at a time; random quotes at full concurrency. */
  pages: Record<string, LoadResult & { path: string }>;
  random?: LoadResult;
  /** Unfiltered `/quotes/facets`, every request distinct (uncached). */
  facets?: LoadResult;
  /** `/authors?sort=quote_count&order=desc` and `/authors/{id}`, each alone. */
  authors?: { top: LoadResult; byId: LoadResult };
  /** Range filters, `/quotes/random?count=50` and `/quotes/today`, each alone (distinct paths). */
  features?: Partial<Record<string, LoadResult>>;
  pastTheEnd?: LoadResult & { path: string };
  /** Full-text search (`q`) through the service, and its engine requests replayed. */
  search?: SearchResults;
  /** 50 deep and past-the-end pages at once, every sort key in both orders. */
  burst?: LoadResult;
  /** Deep and past-the-end pages of every sort key in both orders, one after another. */
  inARow?: LoadResult;
}

export interface MeiliReport {
  machine: Machine;
  config: BenchConfig & { backend: 'meilisearch' };
  results: MeiliResults;
  targets: TargetResult[];
  failures: string[];
}

/** The production path's targets. */
export const MEILI_TARGETS = {
  indexingRatio: 1.25,
  indexerRssBytes: 300_000_000,
  mixRatio: 0.85,
  mixP99Ms: 100,
  pageP99Ms: 300,
  randomP99Ms: 50,
  pastTheEndP99Ms: 50,
  engineRssGrowth: 1.5,
  /** The service's default engine timeout (MEILI_TIMEOUT_MS): no answer may wait longer. */
  burstP99Ms: 2000,
} as const;

/** Service answers per second of the replay: engine requests per second over requests per answer. */
export function replayAnswersPerSecond(results: MeiliResults): number {
  return answersPerSecond(results, results.replay);
}

/** Service answers per second of the bare forwarder, counted as the replay's are. */
export function forwarderAnswersPerSecond(results: MeiliResults): number {
  return answersPerSecond(results, results.forwarder);
}

function answersPerSecond(results: MeiliResults, run: LoadResult | undefined): number {
  return (run?.rps ?? 0) / Math.max(results.requestsPerAnswer ?? 0, Number.MIN_VALUE);
}

function onlyStatus(result: LoadResult, status: string): boolean {
  return result.errors === 0 && result.timeouts === 0 && (result.statuses[status] ?? 0) === result.requests;
}

export function evaluateMeili(results: MeiliResults, count: number): TargetResult[] {
  const t = MEILI_TARGETS;
  const out: TargetResult[] = [];
  const atMost = (name: string, value: number | null, max: number, extra = true) =>
    out.push({ name, target: `≤ ${max}`, value, pass: value === null ? null : value <= max && extra });
  const atLeast = (name: string, value: number, min: number) =>
    out.push({ name, target: `≥ ${min}`, value, pass: value >= min });
  const { indexing, directIngestionSeconds } = results;
  atMost(
    'indexing: indexer / engine ingestion',
    indexing === null || directIngestionSeconds === null ? null : indexing.seconds / directIngestionSeconds,
    t.indexingRatio,
  );
  atMost(
    'indexer peak RSS (MB)',
    indexing?.peakRssBytes == null ? null : Math.round(indexing.peakRssBytes / 1e6),
    t.indexerRssBytes / 1e6,
  );
  if (results.mix !== undefined) {
    atLeast(
      'uncached mix: service / direct replay',
      results.mix.rps / replayAnswersPerSecond(results),
      t.mixRatio,
    );
    atMost('uncached mix p99 (ms)', results.mix.p99, t.mixP99Ms);
  }
  for (const [name, page] of Object.entries(results.pages)) {
    atMost(`${name}: p99 (ms), all 200`, page.p99, t.pageP99Ms, onlyStatus(page, '200'));
  }
  if (results.random !== undefined) {
    atMost(
      '/quotes/random p99 (ms), all 200',
      results.random.p99,
      t.randomP99Ms,
      onlyStatus(results.random, '200'),
    );
  }
  if (results.facets !== undefined) {
    atMost(
      'unfiltered facets, uncached: p99 (ms), all 200',
      results.facets.p99,
      FACETS_P99_MS,
      onlyStatus(results.facets, '200'),
    );
  }
  const { pastTheEnd, inARow, burst } = results;
  if (pastTheEnd !== undefined && inARow !== undefined && burst !== undefined) {
    atMost(
      'past the last page: p99 (ms), all 404',
      pastTheEnd.p99,
      t.pastTheEndP99Ms,
      onlyStatus(pastTheEnd, '404'),
    );
    const rowAnswered =
      inARow.errors === 0 &&
      inARow.timeouts === 0 &&
      Object.keys(inARow.statuses).every((status) => ['200', '404'].includes(status));
    atMost(
      'deep pages of every sort, in a row: slowest (ms), each 200 or 404',
      inARow.max ?? inARow.p99,
      t.pageP99Ms,
      rowAnswered,
    );
    const burstAnswered =
      burst.errors === 0 &&
      burst.timeouts === 0 &&
      Object.keys(burst.statuses).every((status) => ['200', '404', '503'].includes(status));
    atMost('50 deep pages at once: p99 (ms), each 200, 404 or 503', burst.p99, t.burstP99Ms, burstAnswered);
  }
  const { rssAfterIndexingBytes: after, deepPeakRssBytes: peak } = results.engine;
  atMost(
    'engine peak RSS serving deep pages / after indexing',
    after === null || peak === null ? null : peak / after,
    t.engineRssGrowth,
  );
  out.push({
    name: 'total_quotes with no filter',
    target: `= ${count}`,
    value: results.totalQuotes,
    pass: results.totalQuotes === count,
  });
  return out;
}

/** Runs whose requests failed. Deep pages and random quotes must answer 200, past the end 404. */
export function meiliFailures(results: MeiliResults): string[] {
  const out: string[] = [];
  const check = (name: string, r: LoadResult, status = '200') => {
    const bad = r.requests - (r.statuses[status] ?? 0) + r.errors + r.timeouts;
    if (bad > 0)
      out.push(`${name}: ${bad} requests not ${status} (${JSON.stringify(r.statuses)}, ${r.errors} errors)`);
  };
  if (results.mix !== undefined) check('uncached mix', results.mix);
  if (results.replay !== undefined) check('direct replay', results.replay);
  if (results.forwarder !== undefined) check('bare forwarder', results.forwarder);
  for (const [name, page] of Object.entries(results.pages)) check(name, page);
  if (results.random !== undefined) check('/quotes/random', results.random);
  if (results.facets !== undefined) check('unfiltered facets', results.facets);
  for (const [name, r] of Object.entries(results.features ?? {})) if (r !== undefined) check(name, r);
  if (results.pastTheEnd !== undefined) check('past the last page', results.pastTheEnd, '404');
  return out;
}

const mb = (bytes: number | null) => (bytes === null ? 'n/a' : `${Math.round(bytes / 1e6)} MB`);
const run = (r: LoadResult) => `${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`;

export function meiliTable(report: MeiliReport): string {
  const { results: r, config: c, machine: m } = report;
  const rows: Array<[string, string]> = [
    [
      'engine',
      `${r.engine.version}; RSS after indexing ${mb(r.engine.rssAfterIndexingBytes)}, peak ${mb(r.engine.peakRssBytes)}`,
    ],
    ['catalogue', `${c.count} quotes, ${(r.catalogue.bytes / 1e6).toFixed(1)} MB`],
    [
      'indexing (indexer / engine alone)',
      r.indexing === null
        ? 'reused (--engine-dir)'
        : `${r.indexing.seconds.toFixed(1)} s / ${r.directIngestionSeconds === null ? 'not measured' : `${r.directIngestionSeconds.toFixed(1)} s`}; indexer peak RSS ${mb(r.indexing.peakRssBytes)}`,
    ],
    ['total_quotes', String(r.totalQuotes)],
    ...(r.mix === undefined || r.replay === undefined
      ? []
      : ([
          [`uncached mix, service (${c.connections} connections)`, run(r.mix)],
          [
            'the same engine requests, replayed',
            `${run(r.replay)}; ${(r.requestsPerAnswer ?? 0).toFixed(2)} per answer = ${Math.round(replayAnswersPerSecond(r))} answers/s`,
          ],
          ...(r.forwarder === undefined
            ? []
            : ([
                [
                  'the same engine requests through a bare forwarder (Fastify and the engine client alone)',
                  `${run(r.forwarder)} = ${Math.round(forwarderAnswersPerSecond(r))} answers/s; ${(forwarderAnswersPerSecond(r) / replayAnswersPerSecond(r)).toFixed(2)} of the replay, the service ${(r.mix.rps / forwarderAnswersPerSecond(r)).toFixed(2)} of it`,
                ],
              ] as Array<[string, string]>)),
        ] as Array<[string, string]>)),
    ...Object.entries(r.pages).map(([name, page]): [string, string] => [
      `${name} (one at a time)`,
      run(page),
    ]),
    ...(r.pastTheEnd === undefined || r.inARow === undefined || r.burst === undefined
      ? []
      : ([
          ['past the last page (one at a time)', run(r.pastTheEnd)],
          [
            `${r.inARow.requests} deep and past-the-end pages in a row, every sort`,
            `${run(r.inARow)}, slowest ${r.inARow.max ?? 'n/a'} ms; ${JSON.stringify(r.inARow.statuses)}`,
          ],
          ['50 deep and past-the-end pages at once', `${run(r.burst)}; ${JSON.stringify(r.burst.statuses)}`],
        ] as Array<[string, string]>)),
    ...(r.random === undefined
      ? []
      : ([[`/quotes/random (${c.connections} connections)`, run(r.random)]] as Array<[string, string]>)),
    ...(r.facets === undefined
      ? []
      : [
          [`unfiltered facets, each request distinct (${c.connections} connections)`, run(r.facets)] as [
            string,
            string,
          ],
        ]),
    ...Object.entries(r.features ?? {}).map(([name, k]): [string, string] => [
      `\`${name}\` alone, distinct paths (${c.connections} connections)`,
      run(k as LoadResult),
    ]),
  ];
  const lines = [
    `Meilisearch benchmark, ${m.date} (${m.cpuCount} × ${m.cpuModel}, Node ${m.node})`,
    '',
    '| measure | result |',
    '| --- | --- |',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    ...searchRows(r.search, c.connections),
    '',
    '| target | rule | value | verdict |',
    '| --- | --- | --- | --- |',
    ...report.targets.map(
      (t) =>
        `| ${t.name} | ${t.target} | ${t.value === null ? 'n/a' : Number.isInteger(t.value) ? t.value : t.value.toFixed(2)} | ${t.pass === null ? 'not measured' : t.pass ? 'pass' : 'FAIL'} |`,
    ),
  ];
  if (report.failures.length > 0) lines.push('', 'Failed requests:', ...report.failures.map((f) => `- ${f}`));
  return `${lines.join('\n')}\n`;
}
