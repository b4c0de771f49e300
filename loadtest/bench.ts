/**
 * `npm run bench`: the project measures itself on any machine, without k6 (see --help and
 * docs/benchmarks.md). Every child process (service, bare Fastify, redis-server, indexer) is
 * stopped however the run ends.
 */

import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Meilisearch } from 'meilisearch';
import { ensureKeys } from '../deploy/meili-keys.ts';
import { catalogueSize } from '../indexer/generate.ts';
import { QUOTE_FIELDS, SORT_FIELDS } from '../service/catalogue/port.ts';
import { UsageError } from '../service/command-line.ts';
import { findMeiliBinary } from '../service/test-support/meilisearch-engine.ts';
import { AUTHORS_CONNECTIONS, AUTHORS_P99_MS, authorByIdPaths, topAuthorPaths } from './bench/authors.ts';
import { ensureCatalogue, indexCatalogue } from './bench/catalogue.ts';
import { FACET_REQUESTS, facetPaths } from './bench/facets.ts';
import { type FeatureKind, featurePaths } from './bench/features.ts';
import { forwarderPaths } from './bench/forwarder.ts';
import {
  type LoadResult,
  type LoadSpec,
  measure,
  measureEachInTurns,
  measureInTurns,
  type RequestSpec,
} from './bench/load.ts';
import { encodeBatches, ingestDirect, meiliVersion, startMeili, startRecorder } from './bench/meili.ts';
import {
  evaluateMeili,
  type MeiliReport,
  type MeiliResults,
  meiliFailures,
  meiliTable,
} from './bench/meili-report.ts';
import { measureOpenLoop } from './bench/open-loop.ts';
import { type BenchOptions, type MeiliRun, parseBenchArgs, USAGE } from './bench/options.ts';
import {
  type Child,
  cpuSecondsOf,
  freePort,
  INDEXER_ENV,
  INDEXER_NODE_FLAGS,
  killAllNow,
  MEILI_SERVICE_NODE_FLAGS,
  memoryOf,
  runMeasured,
  SERVICE_NODE_FLAGS,
  start,
  stopAll,
  waitForHttp,
  watchMemory,
} from './bench/processes.ts';
import { redisServerVersion, scriptCalls, startRedis } from './bench/redis.ts';
import {
  type BenchConfig,
  type BenchReport,
  type BenchResults,
  evaluate,
  failures,
  machine,
  type RedisResult,
  table,
} from './bench/report.ts';
import { idPaths, mixPaths, sampleVocabulary } from './bench/sample.ts';
import { type SearchResults, searchPaths } from './bench/search.ts';
import { MIX_KINDS, seededRandom } from './lib/mix.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USER = 'bench';
// Generated per run: nothing else ever uses it, and it never appears in output.
const PASSWORD = `bench-${process.pid}-${Date.now()}`;
/** The contract's maximum RATE_LIMIT_MAX: the throughput runs must never be limited. */
const NO_LIMIT = '1000000000';

// Configuration the service reads (docs/configuration.md#configuration): a value in the caller's
// shell must not silently change what is measured.
const SERVICE_VARIABLES = [
  'PORT',
  'HOST',
  'SEARCH_BACKEND',
  'SQLITE_PATH',
  'MEILI_HOST',
  'MEILI_API_KEY',
  'MEILI_ADMIN_KEY',
  'MEILI_INDEX',
  'RATE_LIMIT_MAX',
  'RATE_LIMIT_STORE',
  'REDIS_URL',
  'RATE_LIMIT_FAIL',
  'AUTH_USERS',
  'AUTH_USERS_FILE',
  'AUTH_BYPASS',
  'TRUST_PROXY',
  'LOG_LEVEL',
  'NODE_ENV',
];

/** Scratch directories (SQLite catalogues) to remove even when the run is interrupted. */
const workDirs = new Set<string>();

function cleanUpNow(): void {
  killAllNow();
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
}

function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete env[name];
  return { ...env, LOG_LEVEL: 'warn' };
}

/**
 * Starts the Node program `script` (a path under the repository) with V8 `flags` and `env` on a
 * free loopback port (its PORT), and waits until `readyPath` answers 200.
 */
async function startServer(
  name: string,
  script: string,
  flags: readonly string[],
  env: NodeJS.ProcessEnv,
  readyPath: string,
): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = start(name, process.execPath, [...flags, join(ROOT, script)], { ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(child, `${url}${readyPath}`);
  return { child, url };
}

function startService(
  name: string,
  sqlitePath: string,
  extra: NodeJS.ProcessEnv,
  flags: readonly string[] = SERVICE_NODE_FLAGS,
): Promise<{ child: Child; url: string }> {
  const env = {
    ...baseEnv(),
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    SEARCH_BACKEND: 'sqlite',
    SQLITE_PATH: sqlitePath,
    AUTH_USERS: `${USER}:${PASSWORD}`,
    RATE_LIMIT_MAX: NO_LIMIT,
    ...extra,
  };
  return startServer(name, 'service/server.ts', flags, env, '/ready');
}

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/** The service's memory now and its peak so far: which phase a peak belongs to. */
function memoryLine(pid: number, phase: string): string {
  const m = memoryOf(pid);
  const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;
  return m === undefined
    ? `service memory after ${phase}: unknown`
    : `service RSS after ${phase}: ${mb(m.rss)}, peak ${mb(m.peak)}`;
}

function summary(name: string, r: LoadResult): string {
  const failed = r.non2xx + r.errors + r.timeouts;
  return `${name}: ${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms${failed > 0 ? `, ${failed} FAILED` : ''}`;
}

/**
 * Runs one benchmark with a scratch directory of its own; every child it started is stopped and
 * the directory removed however it ends.
 */
async function inScratch<T>(benchmark: (work: string) => Promise<T>): Promise<T> {
  const work = mkdtempSync(join(tmpdir(), 'quotes-bench-'));
  workDirs.add(work);
  try {
    return await benchmark(work);
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    workDirs.delete(work);
  }
}

async function run(options: BenchOptions): Promise<BenchReport> {
  const env = baseEnv();
  const random = seededRandom(options.seed);
  const auth = { Authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };
  const load = { connections: options.connections, duration: options.duration };
  // Enough warm-up for V8 to optimise the hot paths and SQLite to fill its page cache.
  const warmup = options.quick ? 300 : 5000;
  // The store comparison warms its two new services for a few seconds each: a slice taken sooner
  // measures a process's start (a Redis-store service just started ran its first 2 s slice at
  // 15,000 req/s and its next four at 19,000 to 23,000). The bare/service comparison keeps
  // `warmup`: its service ran the vocabulary's requests before, and bare Fastify has little to warm.
  const storesWarmup = options.quick ? 300 : 50_000;
  return inScratch(async (work) => {
    log(`catalogue of ${options.count} quotes (seed ${options.seed})`);
    const catalogue = await ensureCatalogue(ROOT, options.cacheDir, options.count, options.seed, env);
    log(`indexing ${catalogue.file}`);
    const sqlitePath = join(work, 'quotes.db');
    const indexing = await indexCatalogue(ROOT, catalogue.file, sqlitePath, env);

    const service = await startService('service', sqlitePath, {});
    const memory = watchMemory(service.child.pid);
    const idleRssBytes = memoryOf(service.child.pid)?.rss ?? null;

    // The bare server answers with exactly the service's `GET /quotes` body and content type.
    const first = await fetch(`${service.url}/quotes`, { headers: auth });
    const body = Buffer.from(await first.arrayBuffer());
    if (first.status !== 200)
      throw new Error(`GET /quotes answered ${first.status}: ${body.toString().slice(0, 300)}`);
    const bodyFile = join(work, 'quotes-body.json');
    writeFileSync(bodyFile, body);
    // The same V8 flags as the service: the ratio compares the code, not the runtime settings.
    const { child: bare, url: bareUrl } = await startServer(
      'bare fastify',
      'loadtest/bench/bare.ts',
      SERVICE_NODE_FLAGS,
      {
        ...env,
        BODY_FILE: bodyFile,
        CONTENT_TYPE: first.headers.get('content-type') ?? 'application/json; charset=utf-8',
      },
      '/health',
    );

    const vocab = await sampleVocabulary(service.url, auth, options.quick ? 3 : 20, random);
    // One draw of distinct paths split in two, so the open-loop run meets no answer cached by the first.
    const mixCount = options.quick ? 10_000 : 100_000;
    const mixAll = mixPaths(vocab, random, mixCount * 2);
    const mix = mixAll.slice(0, Math.ceil(mixAll.length / 2));
    const mixLater = mixAll.slice(mix.length);
    const ids = idPaths(vocab, random, options.quick ? 10_000 : 100_000);

    // Bare and service take turns, as the two rate-limit stores do below.
    const [bareRun, serviceRun] = await measureInTurns(
      { baseUrl: bareUrl, paths: ['/quotes'], ...load, warmup },
      { baseUrl: service.url, paths: ['/quotes'], headers: auth, ...load, warmup },
    );
    log(summary('bare GET /quotes', bareRun));
    log(summary('service GET /quotes', serviceRun));
    log(memoryLine(service.child.pid, 'GET /quotes'));
    await bare.stop();
    const mixRun = await measure({ baseUrl: service.url, paths: mix, headers: auth, ...load, warmup });
    log(summary(`uncached mix (${mix.length} paths)`, mixRun));
    log(memoryLine(service.child.pid, 'the uncached mix'));
    const mixAtRate = await measureOpenLoop({
      baseUrl: service.url,
      paths: mixLater,
      headers: auth,
      connections: options.connections,
      duration: options.duration,
      rate: options.mixRate,
    });
    log(summary(`uncached mix at ${options.mixRate} req/s (${mixLater.length} paths)`, mixAtRate));
    const idRun = await measure({ baseUrl: service.url, paths: ids, headers: auth, ...load, warmup });
    log(summary('by id', idRun));
    log(memoryLine(service.child.pid, 'by id'));
    // Each kind of the mix alone, to tell which one a slow mix owes its latency to.
    const target = { baseUrl: service.url, headers: auth };
    const byKind = await measureEachAlone(
      MIX_KINDS.map((kind) => [kind, mixPaths(vocab, random, options.quick ? 1000 : 20_000, kind)] as const),
      (kind) => `  mix kind ${kind}`,
      options,
      target,
      4,
    );
    // Range filters, several random quotes and the quote of the day, each kind alone.
    const features = await measureEachAlone(
      featureEntries(random, options.quick ? 1000 : 20_000),
      (kind) => `  ${kind}`,
      options,
      target,
      4,
    );
    log(memoryLine(service.child.pid, 'each kind of the mix'));
    const facetRun = await measureFacets(
      facetPaths(random, options.quick ? 300 : FACET_REQUESTS),
      options,
      target,
    );
    const authors = await measureAuthors(random, options, target);
    const search = await measureSearch(catalogue.file, random, options, target);
    log(memoryLine(service.child.pid, 'full-text search'));
    const peakRssBytes = memory.peak() ?? null;
    memory.stop();

    let redis: RedisResult = { skipped: 'disabled with --no-redis' };
    const version = options.redis ? redisServerVersion() : undefined;
    if (options.redis && version === undefined) redis = { skipped: 'redis-server not found on PATH' };
    if (version !== undefined) {
      // Two new services, one per store, taking turns. Not the service measured so far: after
      // the mix it ran a few percent slower than a new one (1.6 to 5.3% in three runs), which
      // counted in the Redis store's favour. Each is loaded as soon as it is ready, as a new
      // replica is: a Redis-store service left idle first escapes a state that one loaded at once
      // could settle into (V8 tenuring every request; see SERVICE_NODE_FLAGS), so the
      // comparison would not show it.
      await service.child.stop();
      const redisPort = await freePort();
      const redisServer = await startRedis(redisPort, env);
      const quotes = { paths: ['/quotes'], headers: auth, ...load };
      const startWarm = async (name: string, extra: NodeJS.ProcessEnv) => {
        const started = await startService(name, sqlitePath, extra);
        await measure({ baseUrl: started.url, ...quotes, amount: storesWarmup });
        return started;
      };
      const withMemory = await startWarm('service (memory store)', {});
      const withRedis = await startWarm('service (redis store)', {
        RATE_LIMIT_STORE: 'redis',
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      });
      // Only the Redis-store service talks to Redis, and an idle redis-server uses next to no CPU,
      // so what Redis did over both loads is the Redis run's.
      const callsBefore = await scriptCalls(redisPort);
      const cpuBefore = cpuSecondsOf(redisServer.pid);
      const [memoryRun, redisRun] = await measureInTurns(
        { baseUrl: withMemory.url, ...quotes },
        { baseUrl: withRedis.url, ...quotes },
      );
      const callsAfter = await scriptCalls(redisPort);
      const cpuAfter = cpuSecondsOf(redisServer.pid);
      const calls = callsBefore === undefined || callsAfter === undefined ? 0 : callsAfter - callsBefore;
      const requestsPerCall = calls > 0 ? redisRun.requests / calls : null;
      const redisCpuUsPerRequest =
        cpuBefore === undefined || cpuAfter === undefined || redisRun.requests === 0
          ? null
          : ((cpuAfter - cpuBefore) / redisRun.requests) * 1e6;
      log(summary('memory store GET /quotes', memoryRun));
      log(summary('redis store GET /quotes', redisRun));
      redis = {
        version,
        memory: memoryRun,
        redis: redisRun,
        cost: 1 - redisRun.rps / memoryRun.rps,
        requestsPerCall,
        redisCpuUsPerRequest,
      };
    }

    const results: BenchResults = {
      catalogue: { count: options.count, bytes: catalogue.bytes, generateSeconds: catalogue.generateSeconds },
      indexing: { seconds: indexing.seconds, peakRssBytes: indexing.peakRssBytes ?? null },
      bare: bareRun,
      serviceQuotes: serviceRun,
      ratio: serviceRun.rps / bareRun.rps,
      mix: mixRun,
      mixAtRate: { ...mixAtRate, rate: options.mixRate },
      byKind,
      features,
      byId: idRun,
      facets: facetRun,
      authors,
      search,
      service: { idleRssBytes, peakRssBytes },
      redis,
    };
    const config: BenchConfig = {
      ...runSettings(options),
      mixPaths: mix.length,
      mixRate: options.mixRate,
      idPaths: ids.length,
    };
    return {
      machine: machine(),
      config,
      results,
      targets: evaluate(results, options.count),
      failures: failures(results),
    };
  });
}

/** Distinct `q` paths per search run: more than a run can use (a path asked twice would come from the answer cache). */
function searchPathCount(options: BenchOptions): number {
  return options.quick ? 2_000 : 40_000;
}

/**
 * Distinct paths a service answers, not measured, before its first run of a kind: a new process
 * runs its code interpreted until V8 has compiled it, which the engine it is compared with, a
 * compiled program, never does. Drawn with the measured paths, so none of them is answered from
 * the cache by the measured run.
 */
function warmupCount(options: BenchOptions): number {
  return options.quick ? 300 : 5_000;
}

/**
 * The warm-up of the uncached mix in front of Meilisearch, longer than {@link warmupCount}: the
 * mix runs through many more of the service's functions than one kind of request does, and V8
 * went on compiling them long after 5,000 answers. Traced at 1M with `--trace-opt`, in 4 s
 * windows of about 7,000 answers of the mix at 50 connections after 5,000: V8 optimized 103 and
 * 53 of the service's functions in the second and third windows, 11 to 34 in each of the next
 * five. The service's CPU per answer in eight such windows of another run: 0.28, 0.28, 0.22,
 * 0.20, 0.19, 0.21, 0.21 and 0.22 ms. It settles about 15,000 answers past the 5,000.
 */
function mixWarmupCount(options: BenchOptions): number {
  return options.quick ? 300 : 20_000;
}

/** The `q` paths of {@link measureSearch}: both runs' and the warm-up's. */
function searchDrawCount(options: BenchOptions): number {
  return searchPathCount(options) * 2 + warmupCount(options);
}

/** Answers `paths` once each at `connections`, unmeasured (see {@link warmupCount}). */
async function warmUp(
  target: { baseUrl: string; headers: Record<string, string> },
  paths: string[],
  connections: number,
): Promise<void> {
  await measure({ ...target, paths, connections, duration: 0, amount: paths.length });
}

/**
 * Seconds of each turn when the service and a direct replay at its engine are measured in turns
 * (measureInTurns): long enough for a run's connections to settle, short enough for several turns
 * in a run of the default 10 s.
 */
const TURN_SECONDS = 2.5;

/**
 * Full-text search, distinct and uncached: 1 to 3 words at 10 connections (latency), then other
 * searches at the run's connections (throughput beside the mix). With `record`, the engine
 * requests behind the 10-connection searches are recorded first, then replayed straight at the
 * engine in turns with the service answering them.
 */
async function measureSearch(
  file: string,
  random: () => number,
  options: BenchOptions,
  target: { baseUrl: string; headers: Record<string, string> },
  record?: (
    paths: string[],
  ) => Promise<{ engine: Pick<LoadSpec, 'baseUrl' | 'paths'>; requestsPerAnswer: number }>,
): Promise<SearchResults> {
  // More paths than a run can use: a path asked twice would come from the answer cache.
  const drawn = await searchPaths(file, random, searchDrawCount(options));
  const warmupPaths = drawn.slice(0, warmupCount(options));
  const paths = drawn.slice(warmupPaths.length);
  const first = paths.slice(0, Math.ceil(paths.length / 2));
  const second = paths.slice(first.length);
  const duration = Math.max(1, Math.round(options.duration / 2));
  const recorded = record === undefined ? undefined : await record(first);
  await warmUp(target, warmupPaths, 10);
  let at10: LoadResult;
  let replay: LoadResult | undefined;
  if (recorded === undefined) {
    at10 = await measure({ ...target, paths: first, connections: 10, duration, warmup: 0 });
  } else {
    // The whole run's duration for each side: turns of a 5 s run are too few to even out the
    // machine's drift (two such runs minutes apart read a ratio of 0.89 and 0.74).
    [at10, replay] = await measureInTurns(
      { ...target, paths: first, connections: 10, duration: options.duration },
      { ...recorded.engine, connections: 10, duration: options.duration },
      TURN_SECONDS,
    );
  }
  log(summary(`q, 1 to 3 words, 10 connections (${first.length} paths)`, at10));
  const atConnections = await measure({
    ...target,
    paths: second,
    connections: options.connections,
    duration,
    warmup: 0,
  });
  log(summary(`q, 1 to 3 words, ${options.connections} connections (${second.length} paths)`, atConnections));
  for (const [name, run, count] of [
    ['10', at10, first.length],
    [String(options.connections), atConnections, second.length],
  ] as const) {
    if (run.requests > count) log(`warning: the q run at ${name} connections cycled: answers were cached`);
  }
  if (recorded === undefined || replay === undefined) return { paths: paths.length, at10, atConnections };
  log(
    summary(
      `q: the same engine requests replayed in turns with it, 10 connections (${recorded.engine.paths.length})`,
      replay,
    ),
  );
  return { paths: paths.length, at10, atConnections, replay, requestsPerAnswer: recorded.requestsPerAnswer };
}

/**
 * Distinct spellings of one listing: the same page with different `fields`. The service keeps
 * answers asked for twice, so a page asked again and again would measure that cache, not the engine.
 */
function distinctSpellings(path: string, count: number): string[] {
  const out: string[] = [];
  for (let mask = (1 << QUOTE_FIELDS.length) - 1; mask > 0 && out.length < count; mask--) {
    const fields = QUOTE_FIELDS.filter((_, i) => (mask & (1 << i)) !== 0);
    out.push(`${path}&fields=${fields.join(',')}`);
  }
  return out;
}

/**
 * `--engine-dir`: the engine's database kept between runs, with the master key it was started
 * with (written for the engine only, never printed) and a note of the catalogue indexed into it.
 * A directory holding another catalogue, or none, is emptied to be indexed anew.
 */
function keptEngine(
  dir: string,
  options: BenchOptions,
): { dbDir: string; masterKey: string; reused: boolean; markIndexed(): void } {
  const notePath = join(dir, 'indexed.json');
  const keyPath = join(dir, 'master.key');
  const dbDir = join(dir, 'db');
  const wanted = JSON.stringify({ count: options.count, seed: options.seed });
  let note: string | undefined;
  try {
    note = readFileSync(notePath, 'utf8').trim();
  } catch {
    note = undefined;
  }
  if (note === wanted && existsSync(keyPath) && existsSync(dbDir)) {
    return { dbDir, masterKey: readFileSync(keyPath, 'utf8').trim(), reused: true, markIndexed() {} };
  }
  // Only what this function writes is ever removed: a directory holding anything else is refused.
  const own = new Set(['db', 'master.key', 'indexed.json']);
  const foreign = existsSync(dir) ? readdirSync(dir).filter((name) => !own.has(name)) : [];
  if (foreign.length > 0) {
    throw new Error(
      `--engine-dir ${dir} holds files the benchmark did not write (${foreign[0]}): name another`,
    );
  }
  rmSync(notePath, { force: true });
  rmSync(dbDir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const masterKey = randomBytes(24).toString('hex');
  writeFileSync(keyPath, masterKey, { mode: 0o600 });
  return {
    dbDir,
    masterKey,
    reused: false,
    markIndexed: () => writeFileSync(notePath, `${wanted}\n`),
  };
}

async function runMeili(options: BenchOptions): Promise<MeiliReport> {
  const binary = findMeiliBinary();
  if (binary === undefined) {
    throw new Error(
      '--backend meilisearch needs a Meilisearch binary: set MEILI_BIN or put meilisearch on PATH',
    );
  }
  const version = meiliVersion(binary);
  if (version === undefined) throw new Error(`${binary} --version failed: is it a Meilisearch binary?`);
  const env = baseEnv();
  const random = seededRandom(options.seed);
  const auth = { Authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };
  return inScratch(async (work) => {
    log(`catalogue of ${options.count} quotes (seed ${options.seed})`);
    const catalogue = await ensureCatalogue(ROOT, options.cacheDir, options.count, options.seed, env);
    const kept = options.engineDir === undefined ? undefined : keptEngine(options.engineDir, options);
    const engine = await startMeili(binary, kept?.dbDir ?? join(work, 'meili'), env, kept?.masterKey);
    log(`${version} started${kept?.reused === true ? ` on the index kept in ${options.engineDir}` : ''}`);
    const engineMemory = watchMemory(engine.child.pid);
    const admin = { url: engine.url, key: engine.masterKey };
    // The deployment's keys: the indexer writes with its own, the service reads with its own.
    const keys = await ensureKeys(new Meilisearch({ host: engine.url, apiKey: engine.masterKey }), 'quotes');
    const indexerKey = keys.get('indexer.key') as string;
    const searchKey = keys.get('search.key') as string;
    const want = (name: MeiliRun) => options.only.has(name);

    let directIngestionSeconds: number | null = null;
    let indexed: { seconds: number; peakRssBytes?: number } | null = null;
    if (kept?.reused !== true) {
      // The engine's own ingestion is the indexer's yardstick, not needed to build the index.
      if (want('ingestion')) {
        log('encoding the documents for the engine alone');
        const batches = await encodeBatches(catalogue.file, work);
        directIngestionSeconds = await ingestDirect(admin, 'direct_ingestion', batches.files);
        log(`the engine alone ingested ${batches.count} documents in ${directIngestionSeconds.toFixed(1)} s`);
        const dropped = await fetch(`${engine.url}/indexes/direct_ingestion`, {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${engine.masterKey}` },
        });
        if (!dropped.ok) throw new Error(`deleting the ingestion index answered ${dropped.status}`);
        for (const file of batches.files) rmSync(file, { force: true });
      }

      log(`indexing ${catalogue.file} through the indexer`);
      const indexer = await runMeasured(
        'indexer',
        process.execPath,
        [...INDEXER_NODE_FLAGS, join(ROOT, 'indexer/cli.ts'), catalogue.file],
        {
          ...env,
          ...INDEXER_ENV,
          SEARCH_BACKEND: 'meilisearch',
          MEILI_HOST: engine.url,
          MEILI_ADMIN_KEY: indexerKey,
        },
      );
      if (indexer.code !== 0)
        throw new Error(`indexer/cli.ts exited ${indexer.code}:\n${indexer.output.trim()}`);
      log(`the indexer took ${indexer.seconds.toFixed(1)} s`);
      indexed = indexer;
      kept?.markIndexed();
    }
    // An engine restarted on a kept index has not yet paged in what indexing left in memory.
    const rssAfterIndexingBytes = indexed === null ? null : (memoryOf(engine.child.pid)?.rss ?? null);

    const meiliEnv = (host: string) => ({
      SEARCH_BACKEND: 'meilisearch',
      MEILI_HOST: host,
      MEILI_API_KEY: searchKey,
    });
    const service = await startService(
      'service',
      join(work, 'unused.db'),
      meiliEnv(engine.url),
      MEILI_SERVICE_NODE_FLAGS,
    );
    const top = (await (await fetch(`${service.url}/quotes?limit=20`, { headers: auth })).json()) as {
      pagination: { total_quotes: number; total_pages: number };
    };
    const totalQuotes = top.pagination.total_quotes;
    const lastPage = top.pagination.total_pages;

    const vocab = await sampleVocabulary(service.url, auth, options.quick ? 3 : 20, random);
    // More distinct paths than a run can use: a path asked twice would come from the answer cache.
    const mixCount = options.quick ? 2_000 : 30_000;
    const mixDrawn = mixPaths(vocab, random, mixCount + mixWarmupCount(options));
    const mix = mixDrawn.slice(0, mixCount);
    const mixWarmup = mixDrawn.slice(mixCount);
    const load = { connections: options.connections, duration: options.duration };
    /**
     * The engine requests behind the answers to `paths`, recorded by a second service pointed at
     * a proxy of the engine (on its own copies of the paths: the runs measured afterwards are not
     * answered from its cache).
     */
    async function recordEngineRequests(name: string, paths: string[]) {
      const recorder = await startRecorder(engine.url);
      const recording = await startService(
        name,
        join(work, 'unused.db'),
        meiliEnv(recorder.url),
        MEILI_SERVICE_NODE_FLAGS,
      );
      recorder.requests.length = 0;
      const answered = await measure({
        baseUrl: recording.url,
        paths,
        headers: auth,
        connections: 8,
        duration: 0,
        amount: paths.length,
      });
      await recording.child.stop();
      await recorder.close();
      return { requests: [...recorder.requests], answers: answered.requests };
    }
    async function measureMix() {
      const { requests, answers } = await recordEngineRequests('service (recording)', mix);
      const requestsPerAnswer = requests.length / answers;
      log(`recorded ${requests.length} engine requests for ${answers} answers`);
      const forwarding = await startForwarder(requests);
      await warmUp({ baseUrl: service.url, headers: auth }, mixWarmup, options.connections);
      // The forwarder runs the same engine client and HTTP server: it is warmed up alike.
      const forwarderCursor = { at: 0 };
      await measure({
        baseUrl: forwarding.url,
        paths: forwarding.paths,
        connections: options.connections,
        duration: 0,
        amount: mixWarmup.length,
        cursor: forwarderCursor,
      });

      // The service, the direct replay and the bare forwarder in turns on the same engine: a
      // drift of the shared machine falls on all alike, and the ratios compare like with like.
      // CPU per answer of each process, summed over its own turns: where the time of a slow run goes.
      const cpuOf = (pid: number) => cpuSecondsOf(pid) ?? Number.NaN;
      const pids = [service.child.pid, engine.child.pid, forwarding.child.pid];
      const cpu = { service: 0, engineForService: 0, engineForReplay: 0, forwarder: 0 };
      const [mixRun, replay, forwarded] = (await measureEachInTurns(
        [
          { baseUrl: service.url, paths: mix, headers: auth, ...load },
          { baseUrl: engine.url, paths: requests, ...load },
          { baseUrl: forwarding.url, paths: forwarding.paths, cursor: forwarderCursor, ...load },
        ],
        TURN_SECONDS,
        async (side, run) => {
          const [serviceBefore, engineBefore, forwarderBefore] = pids.map(cpuOf) as [number, number, number];
          const result = await run();
          const [serviceAfter, engineAfter, forwarderAfter] = pids.map(cpuOf) as [number, number, number];
          if (side === 0) {
            cpu.service += serviceAfter - serviceBefore;
            cpu.engineForService += engineAfter - engineBefore;
          } else if (side === 1) {
            cpu.engineForReplay += engineAfter - engineBefore;
          } else {
            cpu.forwarder += forwarderAfter - forwarderBefore;
          }
          return result;
        },
      )) as [LoadResult, LoadResult, LoadResult];
      await forwarding.child.stop();
      const perAnswerMs = (seconds: number, count: number) => ((seconds / count) * 1e3).toFixed(2);
      log(summary(`uncached mix (${mix.length} paths)`, mixRun));
      log(
        `  CPU per answer: service ${perAnswerMs(cpu.service, mixRun.requests)} ms, engine ${perAnswerMs(cpu.engineForService, mixRun.requests)} ms`,
      );
      if (mixRun.requests > mix.length)
        log(`warning: the mix cycled (${mixRun.requests} requests): answers were cached`);
      log(summary(`the same engine requests, replayed in turns with it (${requests.length})`, replay));
      log(`  engine CPU per request: ${perAnswerMs(cpu.engineForReplay, replay.requests)} ms`);
      log(summary('the same engine requests through a bare forwarder, in turns with them', forwarded));
      log(`  forwarder CPU per request: ${perAnswerMs(cpu.forwarder, forwarded.requests)} ms`);
      return { mix: mixRun, replay, forwarder: forwarded, requestsPerAnswer };
    }
    /** The bare forwarder (bench/forwarder.ts) of `requests` to the engine, with the service's key and V8 flags. */
    async function startForwarder(requests: RequestSpec[]) {
      const file = join(work, 'engine-requests.json');
      writeFileSync(file, JSON.stringify(requests));
      const server = await startServer(
        'forwarder',
        'loadtest/bench/forwarder.ts',
        MEILI_SERVICE_NODE_FLAGS,
        { ...env, FORWARD_REQUESTS: file, MEILI_HOST: engine.url, MEILI_API_KEY: searchKey },
        '/ready',
      );
      return { ...server, paths: forwarderPaths(requests.length) };
    }
    const mixRuns = want('mix') ? await measureMix() : {};

    // The engine's memory while it serves deep pages, one at a time and then all at once.
    const deepMemory = watchMemory(engine.child.pid);
    const one = { headers: auth, connections: 1, duration: 0, amount: options.quick ? 20 : 100 };
    const pages: MeiliResults['pages'] = {};
    let pastTheEnd: MeiliResults['pastTheEnd'];
    let inARow: LoadResult | undefined;
    let burst: LoadResult | undefined;
    if (want('pages')) {
      const pagePaths: Record<string, string> = {
        'last page, sort=id': `/quotes?sort=id&limit=20&page=${lastPage}`,
        'page at 80%, sort=category': `/quotes?sort=category&limit=20&page=${Math.max(1, Math.ceil(lastPage * 0.8))}`,
        'middle page, sort=quote_length desc': `/quotes?sort=quote_length&order=desc&limit=20&page=${Math.max(1, Math.ceil(lastPage / 2))}`,
      };
      for (const [name, path] of Object.entries(pagePaths)) {
        const result = await measure({
          baseUrl: service.url,
          paths: distinctSpellings(path, one.amount),
          ...one,
        });
        pages[name] = { ...result, path };
        log(summary(name, result));
      }
      const pastPath = `/quotes?limit=20&page=${lastPage + 1}`;
      pastTheEnd = {
        ...(await measure({ baseUrl: service.url, paths: distinctSpellings(pastPath, one.amount), ...one })),
        path: pastPath,
      };
      // Every answer here should be a 404: summary() would call them failures.
      log(
        `past the last page: p50 ${pastTheEnd.p50} ms, p99 ${pastTheEnd.p99} ms, statuses ${JSON.stringify(pastTheEnd.statuses)}`,
      );
      // Deep and past-the-end pages of every sort key in both orders, first one after another
      // (each must be answered 200 or 404 within a page's target), then 50 at once: each must be
      // answered (200, 404, or 503 where the service sheds load) within the service's engine timeout.
      const burstPaths: string[] = [];
      for (const field of SORT_FIELDS)
        for (const order of ['asc', 'desc'])
          for (const page of [lastPage + 1, lastPage, Math.ceil(lastPage * 0.8), Math.ceil(lastPage / 2)])
            burstPaths.push(`/quotes?sort=${field}&order=${order}&limit=20&page=${Math.max(1, page)}`);
      // Spelled differently from the burst (one field fewer), so that no answer of the row is cached for it.
      const rowPaths = burstPaths.map((path) => `${path}&fields=${QUOTE_FIELDS.slice(0, -1).join(',')}`);
      inARow = await measure({
        baseUrl: service.url,
        paths: rowPaths,
        headers: auth,
        connections: 1,
        duration: 0,
        amount: rowPaths.length,
      });
      log(
        `${rowPaths.length} deep pages in a row: p50 ${inARow.p50} ms, slowest ${inARow.max} ms, statuses ${JSON.stringify(inARow.statuses)}`,
      );
      burst = await measure({
        baseUrl: service.url,
        paths: burstPaths.slice(0, 50),
        headers: auth,
        connections: 50,
        duration: 0,
        amount: 50,
      });
      log(
        `50 deep pages at once: p50 ${burst.p50} ms, p99 ${burst.p99} ms, statuses ${JSON.stringify(burst.statuses)}`,
      );
    }
    const deepPeakRssBytes = deepMemory.peak() ?? null;
    deepMemory.stop();
    let randomRun: LoadResult | undefined;
    if (want('random')) {
      randomRun = await measure({
        baseUrl: service.url,
        paths: ['/quotes/random'],
        headers: auth,
        connections: options.connections,
        duration: Math.max(1, Math.round(options.duration / 2)),
      });
      log(summary('/quotes/random', randomRun));
    }
    // Paths are drawn whatever --only chooses, so that a run measures the same requests alone as in all.
    const facets = facetPaths(random, options.quick ? 300 : FACET_REQUESTS);
    const facetRun = want('facets')
      ? await measureFacets(facets, options, { baseUrl: service.url, headers: auth })
      : undefined;
    const authors = want('authors')
      ? await measureAuthors(random, options, { baseUrl: service.url, headers: auth })
      : undefined;
    let search: SearchResults | undefined;
    if (!want('q')) await searchPaths(catalogue.file, random, searchDrawCount(options));
    else
      search = await measureSearch(
        catalogue.file,
        random,
        options,
        { baseUrl: service.url, headers: auth },
        async (paths) => {
          const { requests: engineRequests, answers } = await recordEngineRequests(
            'service (recording q)',
            paths,
          );
          return {
            engine: { baseUrl: engine.url, paths: engineRequests },
            requestsPerAnswer: engineRequests.length / answers,
          };
        },
      );
    const runOf: Record<FeatureKind, MeiliRun> = {
      ranges: 'ranges',
      'random count=50': 'random-count',
      today: 'today',
    };
    const features = await measureEachAlone(
      featureEntries(random, options.quick ? 500 : 5_000).filter(([kind]) => want(runOf[kind])),
      (kind) => `  ${kind}`,
      options,
      { baseUrl: service.url, headers: auth },
      2,
    );
    const peakRssBytes = engineMemory.peak() ?? null;
    engineMemory.stop();

    const results: MeiliResults = {
      engine: { version, rssAfterIndexingBytes, peakRssBytes, deepPeakRssBytes },
      catalogue: { count: options.count, bytes: catalogue.bytes },
      indexing:
        indexed === null ? null : { seconds: indexed.seconds, peakRssBytes: indexed.peakRssBytes ?? null },
      directIngestionSeconds,
      totalQuotes,
      ...mixRuns,
      pages,
      random: randomRun,
      facets: facetRun,
      authors,
      features,
      pastTheEnd,
      burst,
      inARow,
      search,
    };
    return {
      machine: machine(),
      config: {
        backend: 'meilisearch',
        ...runSettings(options),
        mixPaths: mix.length,
        idPaths: 0,
      },
      results,
      targets: evaluateMeili(results, options.count),
      failures: meiliFailures(results),
    };
  });
}

async function main(args: readonly string[]): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseBenchArgs(args, ROOT);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench: ${error.message.replace(/ \(see --help\)$/, '')} (see --help)\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  // Children must not outlive the benchmark, whichever way it ends.
  process.once('exit', cleanUpNow);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      cleanUpNow();
      process.exit(code);
    });
  }
  let report: BenchReport | MeiliReport;
  try {
    report = options.backend === 'meilisearch' ? await runMeili(options) : await run(options);
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    return 1;
  }
  process.stdout.write(
    'backend' in report.config ? meiliTable(report as MeiliReport) : table(report as BenchReport),
  );
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(report, null, 2)}\n`);
  log(`report written to ${options.out}`);
  if (report.failures.length > 0) return 1;
  if (options.check && report.targets.some((t) => t.pass === false)) return 2;
  return 0;
}

process.exitCode = await main(process.argv.slice(2));

/** The settings of the run that every report records, whichever engine it measured. */
function runSettings(
  options: BenchOptions,
): Pick<BenchConfig, 'count' | 'seed' | 'duration' | 'connections' | 'quick'> {
  const { count, seed, duration, connections, quick } = options;
  return { count, seed, duration, connections, quick };
}

/** One kind of request alone, logged under `label`. */
async function measureAlone(
  label: string,
  paths: string[],
  options: BenchOptions,
  target: { baseUrl: string; headers: Record<string, string> },
  limit: { duration: number; amount?: number },
): Promise<LoadResult> {
  const run = await measure({ ...target, paths, connections: options.connections, ...limit });
  log(summary(label, run));
  return run;
}

/** Each kind of request alone, in turn, for a share (`1 / share`) of the run's duration each. */
async function measureEachAlone<K extends string>(
  kinds: readonly (readonly [K, string[]])[],
  label: (kind: K) => string,
  options: BenchOptions,
  target: { baseUrl: string; headers: Record<string, string> },
  share: number,
): Promise<Partial<Record<K, LoadResult>>> {
  const results: Partial<Record<K, LoadResult>> = {};
  for (const [kind, paths] of kinds)
    results[kind] = await measureAlone(label(kind), paths, options, target, shareOf(options, share));
  return results;
}

/** The paths of each feature kind, kind by kind. */
function featureEntries(random: () => number, count: number): [FeatureKind, string[]][] {
  return Object.entries(featurePaths(random, count)) as [FeatureKind, string[]][];
}

/** A share (`1 / share`) of the run's duration; `--quick` sends 200 requests instead. */
function shareOf(options: BenchOptions, share: number): { duration: number; amount?: number } {
  return {
    duration: Math.max(1, Math.round(options.duration / share)),
    amount: options.quick ? 200 : undefined,
  };
}

/** The unfiltered facets, each path asked once so that none comes from the cache of answers. */
function measureFacets(
  paths: string[],
  options: BenchOptions,
  target: { baseUrl: string; headers: Record<string, string> },
): Promise<LoadResult> {
  const label = `unfiltered facets (${paths.length} distinct requests)`;
  return measureAlone(label, paths, options, target, { duration: 0, amount: paths.length });
}

/**
 * `/authors?sort=quote_count&order=desc` (distinct pages and sizes, none answered from the cache
 * of answers) and `/authors/{id}` (ids drawn over the generated catalogue's authors), each alone
 * at {@link AUTHORS_CONNECTIONS} connections, the load the feature's target is stated at.
 */
async function measureAuthors(
  random: () => number,
  options: BenchOptions,
  target: { baseUrl: string; headers: Record<string, string> },
): Promise<{ top: LoadResult; byId: LoadResult }> {
  const authors = catalogueSize(options.count).authors;
  /** Every path once, logged as `what (n requests, …)`. */
  const eachOnce = async (what: string, requests: string, paths: string[]) => {
    const run = await measure({
      ...target,
      paths,
      connections: AUTHORS_CONNECTIONS,
      duration: 0,
      amount: paths.length,
    });
    log(
      summary(
        `${what} (${paths.length} ${requests}, ${AUTHORS_CONNECTIONS} connections; target p99 ${AUTHORS_P99_MS} ms)`,
        run,
      ),
    );
    return run;
  };
  const top = topAuthorPaths(random, options.quick ? 300 : 2000, authors);
  const topRun = await eachOnce('/authors?sort=quote_count&order=desc', 'distinct requests', top);
  const ids = authorByIdPaths(random, options.quick ? 300 : 5000, authors);
  return { top: topRun, byId: await eachOnce('/authors/{id}', 'requests', ids) };
}
