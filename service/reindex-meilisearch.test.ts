import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keySpecs } from '../deploy/meili-keys.ts';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { BYPASS } from './test-app.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';
import { type Finished, runProcess } from './test-support/processes.ts';

const SUITE = 'live reindex';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OLD_COUNT = 1500;
const NEW_COUNT = 2500;

const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

function run(script: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return runProcess(process.execPath, [join(ROOT, script), ...args], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env },
  });
}

describe.skipIf('skip' in source)('a live reindex on Meilisearch', () => {
  let engine: MeiliEngine;
  let dir: string;
  let live: string;
  let indexerEnv: Record<string, string>;
  let app: FastifyInstance;
  let origin: string;

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    dir = mkdtempSync(join(tmpdir(), 'quotes-reindex-'));
    live = `quotes_${randomBytes(4).toString('hex')}`;
    const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
    const [indexerSpec, serviceSpec] = keySpecs(live);
    if (indexerSpec === undefined || serviceSpec === undefined) throw new Error('two key specs expected');
    const [indexerKey, serviceKey] = await Promise.all(
      [indexerSpec, serviceSpec].map((spec) =>
        admin.createKey({ name: spec.name, actions: spec.actions, indexes: spec.indexes, expiresAt: null }),
      ),
    );
    indexerEnv = {
      SEARCH_BACKEND: 'meilisearch',
      MEILI_HOST: engine.host,
      MEILI_INDEX: live,
      MEILI_ADMIN_KEY: (indexerKey as { key: string }).key,
    };
    for (const [name, count, seed] of [
      ['old', OLD_COUNT, 1],
      ['new', NEW_COUNT, 2],
    ] as const) {
      const generated = await run('indexer/generate.ts', [
        '--count',
        String(count),
        '--seed',
        String(seed),
        '--out',
        join(dir, `${name}.ndjson`),
      ]);
      expect(generated.code, generated.stderr).toBe(0);
    }
    const first = await run('indexer/cli.ts', [join(dir, 'old.ndjson')], indexerEnv);
    expect(first.code, first.stderr).toBe(0);
    app = await buildApp(
      loadConfig({
        SEARCH_BACKEND: 'meilisearch',
        MEILI_HOST: engine.host,
        MEILI_INDEX: live,
        MEILI_API_KEY: (serviceKey as { key: string }).key,
        LOG_LEVEL: 'silent',
        RATE_LIMIT_MAX: '1000000',
        AUTH_BYPASS: 'allow',
      }),
    );
    origin = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await engine?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** The catalogue size the service reports now. */
  async function total(): Promise<number> {
    const res = await fetch(`${origin}/quotes?limit=1`, { headers: BYPASS });
    expect(res.status).toBe(200);
    return ((await res.json()) as { pagination: { total_quotes: number } }).pagination.total_quotes;
  }

  it('answers every read during the swap, each from the old catalogue or the new one', {
    timeout: 180_000,
  }, async () => {
    expect(await total()).toBe(OLD_COUNT);
    const totals = new Map<number, number>();
    const failures: string[] = [];
    let reads = 0;
    let reading = true;
    const reader = async (worker: number) => {
      for (let i = worker; reading; i += 4) {
        // Pages from both ends of the catalogue, a quote by id and a random one: every read path.
        const paths = [
          `/quotes?limit=20&page=${1 + (i % 60)}&sort=author`,
          `/quotes?limit=20&page=${70 - (i % 5)}&sort=id&order=desc`,
          `/quotes/${1 + (i % OLD_COUNT)}`,
          '/quotes/random?fields=id',
        ];
        const path = paths[i % paths.length] as string;
        const res = await fetch(`${origin}${path}`, { headers: BYPASS });
        const body = await res.text();
        reads++;
        if (res.status !== 200) {
          failures.push(`${path}: ${res.status} ${body.slice(0, 200)}`);
          continue;
        }
        const pagination = (JSON.parse(body) as { pagination?: { total_quotes: number } }).pagination;
        if (pagination !== undefined)
          totals.set(pagination.total_quotes, (totals.get(pagination.total_quotes) ?? 0) + 1);
      }
    };
    const readers = [0, 1, 2, 3].map(reader);
    const reindexed = await run('indexer/cli.ts', [join(dir, 'new.ndjson')], indexerEnv);
    // Reads go on after the swap until the readers themselves have seen the new catalogue (on a
    // busy machine one read can take longer than any fixed pause).
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !totals.has(NEW_COUNT)) await new Promise((r) => setTimeout(r, 100));
    reading = false;
    await Promise.all(readers);

    console.info(
      `live reindex: ${reads} reads, ${failures.length} failed, totals seen ${JSON.stringify(Object.fromEntries(totals))}`,
    );
    expect(reindexed.code, reindexed.stderr).toBe(0);
    expect(reindexed.stdout).toMatch(
      new RegExp(`^indexed ${NEW_COUNT} quotes into meilisearch index ${live} `),
    );
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(50);
    expect([...totals.keys()].sort()).toEqual([OLD_COUNT, NEW_COUNT]);
    expect(await total()).toBe(NEW_COUNT);
  });

  it('refuses a file with broken records, names every one, and leaves the live catalogue as it was', async () => {
    const lines = readFileSync(join(dir, 'old.ndjson'), 'utf8').trimEnd().split('\n');
    const broken = lines.map((line, i) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      if (i === 2) delete record.author;
      if (i === 6) record.publish_date = '2001-02-30';
      if (i === 9) record.source = 'not a url';
      return JSON.stringify(record);
    });
    writeFileSync(join(dir, 'broken.ndjson'), `${broken.join('\n')}\n`);
    const before = await total();
    const { code, stderr } = await run('indexer/cli.ts', [join(dir, 'broken.ndjson')], indexerEnv);
    expect(code).toBe(1);
    const named = stderr.split('\n').filter((line) => line.startsWith('record '));
    expect(named.map((line) => line.split(' ')[1])).toEqual(['3', '7', '10']);
    expect(await total()).toBe(before);
    const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
    const indexes = (await admin.getRawIndexes({ limit: 1000 })).results.map((index) => index.uid);
    expect(indexes.filter((uid) => uid.startsWith(live)).sort()).toEqual(
      [live, `${live}_authors`, `${live}_works`].sort(),
    );
  });

  it('never shows an author whose quote count disagrees with the quotes of its catalogue', {
    timeout: 180_000,
  }, async () => {
    // Each catalogue's authors, read from its file: id → [name, number of quotes].
    const authorsOf = (name: string) => {
      const out = new Map<number, [string, number]>();
      for (const line of readFileSync(join(dir, `${name}.ndjson`), 'utf8')
        .trimEnd()
        .split('\n')) {
        const q = JSON.parse(line) as { author_id: number; author: string };
        out.set(q.author_id, [q.author, (out.get(q.author_id)?.[1] ?? 0) + 1]);
      }
      return out;
    };
    const before = authorsOf('new');
    const after = authorsOf('old');
    // Ids present in both with different names: the name says which catalogue answered.
    const ids = [...before.keys()].filter(
      (id) => after.has(id) && after.get(id)?.[0] !== before.get(id)?.[0],
    );
    expect(ids.length).toBeGreaterThan(5);
    const failures: string[] = [];
    const seen = { before: 0, after: 0, paired: 0 };
    let reading = true;
    const read = async (path: string) => {
      const res = await fetch(`${origin}${path}`, { headers: BYPASS });
      const body = await res.text();
      if (res.status !== 200) failures.push(`${path}: ${res.status} ${body.slice(0, 200)}`);
      return res.status === 200 ? JSON.parse(body) : undefined;
    };
    const reader = async (worker: number) => {
      for (let i = worker; reading; i += 3) {
        const id = ids[i % ids.length] as number;
        const author = (await read(`/authors/${id}`)) as { name: string; quote_count: number } | undefined;
        const quotes = (await read(`/quotes?author_id=${id}&limit=1&fields=author`)) as
          | { items: { author: string }[]; pagination: { total_quotes: number } }
          | undefined;
        if (author === undefined || quotes === undefined) continue;
        const pair = [author.name, author.quote_count];
        const known = [before.get(id), after.get(id)].map((p) => JSON.stringify(p));
        if (!known.includes(JSON.stringify(pair)))
          failures.push(`/authors/${id} mixed catalogues: ${JSON.stringify(pair)}`);
        if (JSON.stringify(pair) === known[0]) seen.before++;
        else seen.after++;
        // Both answers from one catalogue: the author's count is the number of its quotes there.
        if (quotes.items[0]?.author === author.name) {
          seen.paired++;
          if (quotes.pagination.total_quotes !== author.quote_count) {
            failures.push(
              `author ${id} (${author.name}): quote_count ${author.quote_count}, /quotes?author_id= ${quotes.pagination.total_quotes}`,
            );
          }
        }
      }
    };
    const readers = [0, 1, 2].map(reader);
    const reindexed = await run('indexer/cli.ts', [join(dir, 'old.ndjson')], indexerEnv);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && seen.after === 0) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 500));
    reading = false;
    await Promise.all(readers);
    console.info(`live reindex of authors: ${JSON.stringify(seen)}, ${failures.length} failed`);
    expect(reindexed.code, reindexed.stderr).toBe(0);
    expect(failures).toEqual([]);
    expect(seen.before).toBeGreaterThan(0);
    expect(seen.after).toBeGreaterThan(0);
    expect(seen.paired).toBeGreaterThan(10);
  });
});
