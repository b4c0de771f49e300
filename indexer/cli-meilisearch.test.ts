/**
 * The indexer's command line on a real Meilisearch, with the deployment's scoped indexer key
 * (`deploy/meili-keys.ts`), as the Compose stack runs it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureKeys } from '../deploy/meili-keys.ts';
import { FIXTURE_QUOTES, syntheticQuotes } from '../service/test-support/fixtures.ts';
import {
  announceSkip,
  type MeiliEngine,
  meiliEngineSource,
} from '../service/test-support/meilisearch-engine.ts';
import { dataRecord, finished, startIndexer, writeDataFile } from './test-files.ts';

const SUITE = 'indexer command line on Meilisearch';
const LIVE = 'cli_quotes';

const source = await meiliEngineSource(inject('containerRuntime'));
const skip = 'skip' in source ? announceSkip(SUITE, source.skip) : undefined;

describe.skipIf(skip !== undefined)(`${SUITE}${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let engine: MeiliEngine;
  let admin: Meilisearch;
  let indexerKey: string;
  let dir: string;
  /** A run still going when the suite ends (a failed assertion) is not left behind. */
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
    indexerKey = (await ensureKeys(admin, LIVE)).get('indexer.key') as string;
    dir = await mkdtemp(join(tmpdir(), 'quotes-cli-meili-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await engine?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  function start(file: string): ChildProcess {
    const child = startIndexer([file], {
      SEARCH_BACKEND: 'meilisearch',
      MEILI_HOST: engine.host,
      MEILI_ADMIN_KEY: indexerKey,
      MEILI_INDEX: LIVE,
    });
    children.push(child);
    return child;
  }

  const indexes = async () => (await admin.getRawIndexes({ limit: 1000 })).results.map((i) => i.uid);
  const liveIds = async () =>
    (await admin.index(LIVE).getDocuments<{ id: number }>({ fields: ['id'], limit: 10_000 })).results
      .map((d) => d.id)
      .sort((a, b) => a - b);

  it('exits as soon as it says an interrupted run changed nothing, its build deleted', async () => {
    const small = await writeDataFile(join(dir, 'fixtures.json'), FIXTURE_QUOTES.map(dataRecord), 'json');
    expect((await finished(start(small))).code).toBe(0);
    const before = await liveIds();
    expect(before).toHaveLength(FIXTURE_QUOTES.length);

    const big = await writeDataFile(
      join(dir, 'big.ndjson'),
      [...syntheticQuotes(60_000)].map(dataRecord),
      'ndjson',
    );
    const child = start(big);
    const result = finished(child);
    // Interrupted once documents are on their way into the build index.
    while (!(await indexes()).some((uid) => uid.startsWith(`${LIVE}_build_`))) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const interrupted = performance.now();
    child.kill('SIGINT');
    const { code, stderr } = await result;
    // The clean-up waits for the build's deletion, a few seconds at most; the process used to
    // stay alive for the whole task timeout (15 minutes) once it had said so.
    expect(performance.now() - interrupted).toBeLessThan(30_000);
    expect(code).toBe(130);
    expect(stderr).toContain('indexer: indexing was interrupted; the catalogue was not changed\n');
    expect(await liveIds()).toEqual(before);
    expect((await indexes()).filter((uid) => uid.startsWith(`${LIVE}_build_`))).toEqual([]);
  }, 120_000);

  it('refuses to swap in a build when another run replaced the catalogue meanwhile, naming that run', async () => {
    const small = await writeDataFile(join(dir, 'first.json'), FIXTURE_QUOTES.map(dataRecord), 'json');
    expect((await finished(start(small))).code).toBe(0);
    const other = await writeDataFile(
      join(dir, 'other.ndjson'),
      [...syntheticQuotes(2_500)].map(dataRecord),
      'ndjson',
    );
    const slow = await writeDataFile(
      join(dir, 'slow.ndjson'),
      [...syntheticQuotes(6_000, { firstId: 1_000_001 })].map(dataRecord),
      'ndjson',
    );
    const child = start(slow);
    const result = finished(child);
    while (!(await indexes()).some((uid) => uid.startsWith(`${LIVE}_build_`))) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Held while a second run replaces the catalogue from start to end.
    child.kill('SIGSTOP');
    const winner = await finished(start(other));
    child.kill('SIGCONT');
    expect(winner.code, winner.stderr).toBe(0);
    const version = /\(version ([^)]+)\)/.exec(winner.stdout)?.[1];
    expect(version).toBeDefined();
    const { code, stdout, stderr } = await result;
    expect(code, stderr).toBe(3);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      `another indexer run replaced ${LIVE} (version ${version}) while this one was building`,
    );
    const ids = await liveIds();
    expect(ids).toHaveLength(2_500);
    expect(ids[ids.length - 1]).toBeLessThan(1_000_000);
    expect((await indexes()).filter((uid) => uid.includes('_build_'))).toEqual([]);
  }, 180_000);
});
