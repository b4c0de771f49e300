/** The benchmark's command line. */
import { isAbsolute, join, resolve } from 'node:path';
import { parseCommandLine, UsageError } from '../../service/command-line.ts';

/** The runs of the Meilisearch benchmark that --only can choose. */
export const MEILI_RUNS = [
  'ingestion',
  'mix',
  'pages',
  'random',
  'facets',
  'q',
  'ranges',
  'random-count',
  'today',
  'authors',
] as const;
export type MeiliRun = (typeof MEILI_RUNS)[number];

export const USAGE = `Usage: npm run bench -- [options]
       node loadtest/bench.ts [options]

Generates (or reuses) a catalogue of N quotes, indexes it, starts the service and a bare Fastify
server, and measures them with autocannon: GET /quotes against bare Fastify, the uncached request
mix, by-id lookups, the Redis rate-limit store (when redis-server is installed), indexing time and
peak memory. Prints a markdown table and writes a JSON report.

  --backend B       sqlite (default) or meilisearch: a fresh engine (MEILI_BIN, or meilisearch
                    on PATH) fed by the indexer; measures indexing against the engine's own
                    ingestion, the uncached mix against a replay of the engine requests the
                    service sent, deep pages, pages past the last and random quotes
  --count N         quotes in the catalogue (default 200000; 10000 with --quick)
  --duration S      seconds per measured run (default 10; 2 with --quick)
  --connections C   concurrent connections (default 50)
  --mix-rate R      requests per second of the open-loop mix run (default 500; 100 with --quick)
  --seed S          generator seed (default 1)
  --quick           short runs on a small catalogue: a check that everything works
  --out FILE        JSON report (default loadtest/results/latest.json)
  --cache-dir DIR   where generated catalogues are kept (default loadtest/results/cache)
  --no-redis        skip the Redis store comparison
  --check           exit 2 when a target fails (exit 1 is kept for failed requests)
  --engine-dir DIR  meilisearch: keep the engine's database in DIR and reuse it; a DIR already
                    indexed with the same --count and --seed skips both indexings (their rows
                    then say "reused"); a new or empty DIR is indexed and kept; a DIR holding
                    files the benchmark did not write is refused
  --only LIST       meilisearch: measure only these runs, comma-separated (default: all):
                    ${MEILI_RUNS.join(', ')}
  --help            show this help

Exit codes: 0 measured; 1 some requests failed or the benchmark could not run; 2 bad usage or,
with --check, a target missed.
`;

/** Resolved options. */
export interface BenchOptions {
  backend: 'sqlite' | 'meilisearch';
  count: number;
  duration: number;
  connections: number;
  /** Arrival rate of the open-loop mix run: latency at a sustained load, not at saturation. */
  mixRate: number;
  seed: number;
  quick: boolean;
  out: string;
  cacheDir: string;
  redis: boolean;
  check: boolean;
  /** Meilisearch: where the engine's database is kept between runs (undefined: a scratch directory). */
  engineDir?: string;
  /** Meilisearch: the runs to measure. */
  only: ReadonlySet<MeiliRun>;
}

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return n;
}

/** Parses the arguments after the script name; `root` is the repository root. */
export function parseBenchArgs(
  args: readonly string[],
  root: string,
  cwd: string = process.cwd(),
): BenchOptions | 'help' {
  const { values } = parseCommandLine(args, {
    backend: { type: 'string' },
    count: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    'mix-rate': { type: 'string' },
    seed: { type: 'string' },
    quick: { type: 'boolean' },
    out: { type: 'string' },
    'cache-dir': { type: 'string' },
    'no-redis': { type: 'boolean' },
    check: { type: 'boolean' },
    'engine-dir': { type: 'string' },
    only: { type: 'string' },
    help: { type: 'boolean' },
  });
  if (values.help === true) return 'help';
  const quick = values.quick === true;
  const str = (name: string) => values[name] as string | undefined;
  const path = (raw: string | undefined, fallback: string) =>
    raw === undefined ? join(root, fallback) : isAbsolute(raw) ? raw : resolve(cwd, raw);
  const backend = str('backend') ?? 'sqlite';
  if (backend !== 'sqlite' && backend !== 'meilisearch') {
    throw new UsageError(`--backend must be sqlite or meilisearch, got '${backend}'`);
  }
  const only = str('only');
  const runs = only === undefined ? [...MEILI_RUNS] : only.split(',').map((name) => name.trim());
  for (const name of runs) {
    if (!(MEILI_RUNS as readonly string[]).includes(name)) {
      throw new UsageError(`--only takes runs among ${MEILI_RUNS.join(', ')}, got '${name}'`);
    }
  }
  if ((str('engine-dir') !== undefined || only !== undefined) && backend !== 'meilisearch') {
    throw new UsageError('--engine-dir and --only go with --backend meilisearch');
  }
  const engineDir = str('engine-dir');
  return {
    backend,
    count: integer('count', str('count'), quick ? 10_000 : 200_000, 1, 10_000_000),
    duration: integer('duration', str('duration'), quick ? 2 : 10, 1, 3600),
    connections: integer('connections', str('connections'), 50, 1, 1000),
    mixRate: integer('mix-rate', str('mix-rate'), quick ? 100 : 500, 1, 1_000_000),
    seed: integer('seed', str('seed'), 1, 0, 0xffff_ffff),
    quick,
    out: path(
      str('out'),
      backend === 'sqlite' ? 'loadtest/results/latest.json' : 'loadtest/results/latest-meilisearch.json',
    ),
    cacheDir: path(str('cache-dir'), 'loadtest/results/cache'),
    redis: values['no-redis'] !== true,
    check: values.check === true,
    ...(engineDir === undefined ? {} : { engineDir: path(engineDir, '') }),
    only: new Set(runs as MeiliRun[]),
  };
}
