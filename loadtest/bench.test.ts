/**
 * `npm run bench` in its tiniest configuration, end to end: a real catalogue generated and
 * indexed, the real service, bare Fastify, redis-server when installed. It proves the benchmark
 * still runs (it cannot rot) and that the service answers the whole mix without one failure.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findMeiliBinary } from '../service/test-support/meilisearch-engine.ts';
import { type Finished, runProcess } from '../service/test-support/processes.ts';
import { announceSkip, announceUsing } from '../service/test-support/suites.ts';
import type { LoadResult } from './bench/load.ts';
import { meiliVersion } from './bench/meili.ts';
import type { MeiliReport } from './bench/meili-report.ts';
import type { BenchReport } from './bench/report.ts';
import { MIX_KINDS } from './lib/mix.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): Promise<Finished> {
  return runProcess(process.execPath, [join(ROOT, 'loadtest/bench.ts'), ...args], { cwd: ROOT });
}

function expectMeasured(name: string, r: LoadResult | undefined): void {
  expect(r, name).toBeDefined();
  const result = r as LoadResult;
  expect(result.requests, name).toBeGreaterThan(0);
  expect(result.rps, name).toBeGreaterThan(0);
  expect(result.p99, name).toBeGreaterThanOrEqual(result.p50);
  expect(result.p99, name).toBeGreaterThan(0);
  // Every request of every run answered 2xx: the service serves the whole mix.
  expect({ name, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }).toEqual({
    name,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
  });
}

describe('npm run bench --quick', () => {
  it('measures everything, prints the table and writes the JSON report', { timeout: 120_000 }, async () => {
    const out = join(dir, 'report.json');
    const { code, stdout, stderr } = await run([
      '--quick',
      '--count',
      '1000',
      '--duration',
      '1',
      '--out',
      out,
      '--cache-dir',
      dir,
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('| measure | result |');
    expect(stdout).toContain('| target | value | rule | result |');
    expect(stdout).toMatch(/\| GET \/quotes, service \(Basic auth\) \| [0-9,]+ req\/s/);

    const report = JSON.parse(readFileSync(out, 'utf8')) as BenchReport;
    const { results } = report;
    expect(report.machine.cpuCount).toBeGreaterThan(0);
    expect(report.machine.node).toBe(process.version);
    expect(report.config).toMatchObject({ count: 1000, duration: 1, quick: true });
    expect(report.config.mixPaths).toBeGreaterThan(100);
    expect(results.catalogue).toMatchObject({ count: 1000 });
    expect(results.catalogue.bytes).toBeGreaterThan(0);
    expect(results.indexing?.seconds).toBeGreaterThan(0);
    expect(results.indexing.peakRssBytes).toBeGreaterThan(0);
    expectMeasured('bare', results.bare);
    expectMeasured('service GET /quotes', results.serviceQuotes);
    expectMeasured('mix', results.mix);
    expect(results.mixAtRate?.rate).toBe(100);
    expectMeasured('mixAtRate', results.mixAtRate);
    expectMeasured('by id', results.byId);
    expectMeasured('unfiltered facets', results.facets);
    expect(results.facets?.statuses).toEqual({ '200': results.facets?.requests });
    for (const kind of MIX_KINDS) expectMeasured(`kind ${kind}`, results.byKind[kind]);
    expect(results.ratio).toBeCloseTo(results.serviceQuotes.rps / results.bare.rps, 10);
    expect(results.service.peakRssBytes).toBeGreaterThan(0);
    expect(results.service.peakRssBytes).toBeGreaterThanOrEqual(results.service.idleRssBytes ?? 0);
    const hasRedis = spawnSync('redis-server', ['--version']).status === 0;
    if (hasRedis) {
      expect('cost' in results.redis).toBe(true);
      if ('cost' in results.redis) {
        expectMeasured('memory store', results.redis.memory);
        expectMeasured('redis store', results.redis.redis);
        expect(results.redis.cost).toBeCloseTo(1 - results.redis.redis.rps / results.redis.memory.rps, 10);
        // Every counted request went through a script call, and a call counts at least one.
        expect(results.redis.requestsPerCall).not.toBeNull();
        expect(results.redis.requestsPerCall).toBeGreaterThanOrEqual(1);
        if (process.platform === 'linux')
          expect(results.redis.redisCpuUsPerRequest).toBeGreaterThanOrEqual(0);
      }
    } else {
      expect(results.redis).toEqual({ skipped: 'redis-server not found on PATH' });
    }
    expect(report.targets.map((t) => t.name)).toEqual([
      'GET /quotes: service / bare Fastify',
      'uncached mix p99 (ms)',
      'uncached mix p99 at 100 req/s (ms)',
      'unfiltered facets, uncached: p99 (ms)',
      'service peak RSS (MB)',
      'Redis store cost vs memory store',
      'runs with failed requests',
    ]);
    expect(report.failures).toEqual([]);
  });

  it('refuses a bad command line with exit code 2 and a usage hint', async () => {
    const { code, stderr } = await run(['--count', 'many']);
    expect(code).toBe(2);
    expect(stderr).toBe("bench: --count must be an integer from 1 to 10000000, got 'many' (see --help)\n");
  });
});

const meili = findMeiliBinary();
if (meili === undefined) {
  announceSkip(
    import.meta.url,
    'npm run bench --backend meilisearch: no Meilisearch binary (set MEILI_BIN or put meilisearch on PATH)',
  );
} else {
  announceUsing(
    import.meta.url,
    `${meiliVersion(meili) ?? 'meilisearch (version unknown)'} for --backend meilisearch`,
  );
}

describe.runIf(meili !== undefined)('npm run bench --backend meilisearch --quick', () => {
  it('indexes through the indexer, replays the service requests and measures every kind of page', {
    timeout: 300_000,
  }, async () => {
    const out = join(dir, 'meili-report.json');
    const engineDir = join(dir, 'engine');
    const { code, stdout, stderr } = await run([
      '--backend',
      'meilisearch',
      '--quick',
      '--count',
      '3000',
      '--duration',
      '1',
      '--out',
      out,
      '--cache-dir',
      dir,
      '--engine-dir',
      engineDir,
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('| target | rule | value | verdict |');
    const report = JSON.parse(readFileSync(out, 'utf8')) as MeiliReport;
    const { results } = report;
    expect(report.config).toMatchObject({ backend: 'meilisearch', count: 3000, quick: true });
    expect(results.engine.version).toMatch(/^meilisearch \d+\.\d+\.\d+/);
    expect(results.totalQuotes).toBe(3000);
    expect(results.directIngestionSeconds).toBeGreaterThan(0);
    expect(results.indexing?.seconds).toBeGreaterThan(0);
    // Every answer of the mix needed at least one engine request, and each was replayed.
    expect(results.requestsPerAnswer).toBeGreaterThanOrEqual(1);
    expectMeasured('mix', results.mix);
    expectMeasured('replay', results.replay);
    expectMeasured('bare forwarder', results.forwarder);
    expect(stdout).toContain('| the same engine requests through a bare forwarder');
    expect(Object.keys(results.pages)).toHaveLength(3);
    for (const [name, page] of Object.entries(results.pages)) expectMeasured(name, page);
    expectMeasured('random', results.random);
    expectMeasured('unfiltered facets', results.facets);
    expect(results.pastTheEnd?.statuses).toEqual({ '404': results.pastTheEnd?.requests });
    expect(report.failures).toEqual([]);

    // Run again on the engine's database kept by the first run: no indexing, only the runs chosen.
    const again = join(dir, 'meili-report-again.json');
    const second = await run([
      '--backend',
      'meilisearch',
      '--quick',
      '--count',
      '3000',
      '--duration',
      '1',
      '--out',
      again,
      '--cache-dir',
      dir,
      '--engine-dir',
      engineDir,
      '--only',
      'random,today',
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('on the index kept in');
    const reused = (JSON.parse(readFileSync(again, 'utf8')) as MeiliReport).results;
    expect(reused.indexing).toBeNull();
    expect(reused.directIngestionSeconds).toBeNull();
    expect(reused.totalQuotes).toBe(3000);
    expectMeasured('random', reused.random);
    expect(Object.keys(reused.features ?? {})).toEqual(['today']);
    expect(reused.mix).toBeUndefined();
    expect(reused.facets).toBeUndefined();
    expect(reused.search).toBeUndefined();
  });
});
