import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FIXTURE_QUOTES, syntheticQuotes } from '../../test-support/fixtures.ts';
import { compareQuotes, project } from '../../test-support/reference.ts';
import type { Directory } from '../authors.ts';
import { type CatalogueHarness, describeCatalogueBehaviour } from '../port.suite.ts';
import {
  type CatalogueIndex,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  codePointLength,
  fold,
  type ListQuery,
  matches,
  normaliseFilters,
  QUOTE_FIELDS,
  type Quote,
  type RawFilters,
  type SortKey,
} from '../port.ts';
import type { Ranges } from '../ranges.ts';
import { createSqliteBuilder } from './builder.ts';
import { openSqliteCatalogue, type SqliteCatalogueOptions } from './catalogue.ts';

async function build(path: string, quotes: Iterable<Quote>, batch = 500): Promise<CatalogueInfo> {
  const builder = await createSqliteBuilder({ path });
  try {
    let chunk: Quote[] = [];
    for (const quote of quotes) {
      chunk.push(quote);
      if (chunk.length >= batch) {
        await builder.add(chunk);
        chunk = [];
      }
    }
    if (chunk.length > 0) await builder.add(chunk);
    return await builder.commit();
  } catch (error) {
    await builder.abort();
    throw error;
  }
}

// Once with the texts read from the file, once with them copied into memory: both must answer alike.
for (const texts of ['disk', 'memory'] as const) {
  describeCatalogueBehaviour(`sqlite, texts on ${texts}`, async (): Promise<CatalogueHarness> => {
    const dir = await mkdtemp(join(tmpdir(), 'quotes-sqlite-suite-'));
    const path = join(dir, 'quotes.db');
    const opened: CatalogueIndex[] = [];
    return {
      async load(quotes) {
        // Small batches: the build must not depend on receiving everything in one add().
        await build(path, quotes, 7);
        const index = openSqliteCatalogue({
          path,
          reloadCheckMs: 0,
          textMemoryBytes: texts === 'disk' ? 0 : undefined,
        });
        opened.push(index);
        const state = await index.texts();
        if (state?.state !== texts) throw new Error(`texts are on ${JSON.stringify(state)}, not ${texts}`);
        return index;
      },
      async teardown() {
        for (const index of opened) await index.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
}

describe('sqlite texts in memory', () => {
  let dir: string;
  let path: string;
  const opened: CatalogueIndex[] = [];
  const open = (options: Partial<SqliteCatalogueOptions> = {}) => {
    const index = openSqliteCatalogue({ path, ...options });
    opened.push(index);
    return index;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quotes-sqlite-texts-'));
    path = join(dir, 'quotes.db');
    await build(path, FIXTURE_QUOTES);
  });
  afterAll(async () => {
    for (const index of opened) await index.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the texts on disk when the file is larger than the budget, and says why', async () => {
    const logger = recordingLogger();
    const index = open({ textMemoryBytes: 1024, logger: logger.logger });
    const state = await index.texts();
    expect(state).toMatchObject({ state: 'disk' });
    expect(state?.state === 'disk' && state.reason).toMatch(/over the budget of 0\.0 MB/);
    expect(logger.entries.some((e) => e.msg === 'sqlite catalogue texts read from the file')).toBe(true);
    // And the answers still carry the texts.
    const quote = await index.get(FIXTURE_QUOTES[0]?.id as number, ['quote', 'source']);
    expect(quote).toEqual({ quote: FIXTURE_QUOTES[0]?.quote, source: FIXTURE_QUOTES[0]?.source });
  });

  it('copies the texts of a file within the budget, and serves them from memory', async () => {
    const logger = recordingLogger();
    const index = open({ logger: logger.logger });
    const state = await index.texts();
    expect(state?.state).toBe('memory');
    const bytes = state?.state === 'memory' ? state.bytes : 0;
    const textBytes = FIXTURE_QUOTES.reduce(
      (sum, q) =>
        sum +
        Buffer.byteLength(JSON.stringify(q.quote)) +
        Buffer.byteLength(',"quote":') +
        Buffer.byteLength(JSON.stringify(q.source)),
      0,
    );
    // The escaped texts with the quote's name between them, and two bounds per quote, nothing else.
    expect(bytes).toBe(textBytes + 4 * (2 * FIXTURE_QUOTES.length + 1));
    expect(logger.entries.find((e) => e.msg === 'sqlite catalogue texts held in memory')?.obj).toMatchObject({
      bytes,
    });
    const all = await index.list({
      filters: {},
      sort: [],
      page: 1,
      limit: 100,
      fields: ['id', 'source', 'quote'],
    });
    const byId = new Map(FIXTURE_QUOTES.map((q) => [q.id, q]));
    for (const item of all.items) {
      const q = byId.get(item.id as number);
      expect(item).toEqual({ id: q?.id, source: q?.source, quote: q?.quote });
    }
  });

  it('stops a copy in progress when the file is closed', async () => {
    const index = open();
    // The copy starts on the next turn of the event loop; close before it runs.
    const settled = index.texts();
    await index.close();
    expect(await settled).toEqual({ state: 'disk', reason: 'the file was closed' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await index.texts()).toBeNull();
    await expect(index.get(1, null)).rejects.toBeInstanceOf(CatalogueUnavailableError);
  });
});

function recordingLogger() {
  const entries: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      entries.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  const logger: CatalogueLogger = { info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, entries };
}

const fileHash = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

async function eventually<T>(probe: () => Promise<T>, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await probe();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/**
 * A catalogue shaped like a real one: author, work, category, genres and date belong to the work,
 * so many quotes share them (40 authors, 150 works of very different sizes), while lengths and
 * ids vary per quote. Deterministic.
 */
function workLevelQuotes(count: number): Quote[] {
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const authors = Array.from(
    { length: 40 },
    (_, i) => `${['Émile', 'Jane', 'Søren', 'Oscar'][i % 4]} Author-${i}`,
  );
  const categories = ['fiction', 'Poetry', 'drama', 'nonfiction'];
  const genres = ['romance', 'Gothic', 'satire', 'tragedy', 'lyric', 'essay', 'comedy', 'épique'];
  const works = Array.from({ length: 150 }, (_, i) => ({
    id: 1000 + i,
    authorId: (i * 7) % 40,
    title: `${['The', 'A', 'On'][i % 3]} Work ${i % 60}`,
    category: categories[i % 4] as string,
    genre: [genres[i % 8] as string, ...(i % 3 === 0 ? [genres[(i + 3) % 8] as string] : [])],
    date: i % 5 === 0 ? `${1800 + (i % 40)}` : `${1800 + (i % 40)}-0${1 + (i % 9)}`,
  }));
  return Array.from({ length: count }, (_, i) => {
    // Squaring skews the draw: the first works hold many quotes, the last ones few.
    const work = works[Math.floor(next() ** 2 * works.length)] as (typeof works)[number];
    const text = `Quote ${i} ${'word '.repeat(Math.floor(next() * 30))}`.trim();
    return {
      id: 3 * i + 1,
      author: authors[work.authorId] as string,
      author_id: work.authorId + 1,
      work: work.title,
      work_id: work.id,
      category: work.category,
      genre: work.genre,
      publish_date: work.date,
      quote_length: codePointLength(text),
      source: `https://example.org/works/${work.id}`,
      quote: text,
      language: work.id % 3 === 0 ? 'fr' : 'en',
    };
  });
}

describe('sqlite catalogue', () => {
  let dir: string;
  let path: string;
  const opened: CatalogueIndex[] = [];
  const open = (options: Omit<SqliteCatalogueOptions, 'path'> = {}) => {
    const index = openSqliteCatalogue({ path, ...options });
    opened.push(index);
    return index;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quotes-sqlite-'));
    path = join(dir, 'nested', 'quotes.db');
  });
  afterEach(async () => {
    vi.useRealTimers();
    for (const index of opened.splice(0)) await index.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is unavailable while the file is missing, then serves it once built', async () => {
    const index = open({ reloadCheckMs: 10 });
    const query: ListQuery = { filters: {}, sort: [], page: 1, limit: 5, fields: null };
    await expect(index.info()).rejects.toBeInstanceOf(CatalogueUnavailableError);
    await expect(index.list(query)).rejects.toBeInstanceOf(CatalogueUnavailableError);
    await expect(index.get(1, null)).rejects.toBeInstanceOf(CatalogueUnavailableError);
    await expect(index.random({}, null)).rejects.toBeInstanceOf(CatalogueUnavailableError);

    // The builder creates the missing directory.
    const built = await build(path, FIXTURE_QUOTES);
    expect(built.count).toBe(42);
    expect(await eventually(() => index.info())).toEqual(built);
    expect((await index.list(query)).total).toBe(42);
  });

  it('is unavailable while the file is not a catalogue, then serves a real one', async () => {
    await build(path, FIXTURE_QUOTES);
    await writeFile(path, 'this is not a database, just some bytes in the way'.repeat(100));
    const { logger, entries } = recordingLogger();
    const index = open({ reloadCheckMs: 10, logger });
    await expect(index.info()).rejects.toBeInstanceOf(CatalogueUnavailableError);
    expect(entries.some((e) => e.level === 'error')).toBe(true);

    const built = await build(path, FIXTURE_QUOTES);
    expect(await eventually(() => index.info())).toEqual(built);
  });

  it('reloads a replaced file on the first call after the check interval, and logs both versions', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = await build(path, FIXTURE_QUOTES);
    const { logger, entries } = recordingLogger();
    const index = open({ reloadCheckMs: 1000, logger });
    expect(await index.info()).toEqual(first);

    const second = await build(
      path,
      FIXTURE_QUOTES.filter((q) => q.category === 'poetry'),
    );
    expect(second.version).not.toBe(first.version);
    // Within the interval the path is not even looked at: checks stay cheap under load.
    expect(await index.info()).toEqual(first);
    vi.setSystemTime(Date.now() + 1001);
    expect(await index.info()).toEqual(second);
    const poetry = await index.list({ filters: {}, sort: [], page: 1, limit: 100, fields: ['id'] });
    expect(poetry.items.map((q) => q.id)).toEqual([12, 33, 45, 57, 60, 81]);
    expect(entries).toContainEqual({
      level: 'info',
      obj: { path, oldVersion: first.version, newVersion: second.version, count: 6 },
      msg: 'sqlite catalogue reloaded',
    });
  });

  it('leaves the live file untouched when a build is aborted', async () => {
    const live = await build(path, FIXTURE_QUOTES);
    const before = await fileHash(path);
    const index = open({ reloadCheckMs: 0 });

    const aborted = await createSqliteBuilder({ path });
    await aborted.add([...syntheticQuotes(100, { label: 'X' })]);
    await aborted.abort();
    await aborted.abort();
    await expect(aborted.commit()).rejects.toThrow(/aborted/);

    // A build that fails half-way (duplicate id) is aborted the same way.
    const failed = await createSqliteBuilder({ path });
    await expect(failed.add([FIXTURE_QUOTES[0] as Quote, FIXTURE_QUOTES[0] as Quote])).rejects.toThrow();
    await failed.abort();

    expect(await fileHash(path)).toBe(before);
    expect(await readdir(join(dir, 'nested'))).toEqual(['quotes.db']);
    expect(await index.info()).toEqual(live);
  });

  it('removes temp files of interrupted builds, never those of running ones', async () => {
    const folder = join(dir, 'nested');
    await build(path, FIXTURE_QUOTES);
    // A pid far above any real one stands for a build killed mid-way.
    const stale = join(folder, '.quotes.db.2147483646.0a1b2c.tmp');
    await writeFile(stale, 'half a catalogue');
    const { logger, entries } = recordingLogger();
    const running = await createSqliteBuilder({ path, logger });
    const second = await createSqliteBuilder({ path, logger });
    const names = await readdir(folder);
    expect(names).not.toContain('.quotes.db.2147483646.0a1b2c.tmp');
    // This process's two builds are both in progress: both temp files stay.
    expect(names.filter((n) => n.startsWith(`.quotes.db.${process.pid}.`))).toHaveLength(2);
    expect(entries).toContainEqual({
      level: 'warn',
      obj: { file: stale },
      msg: 'removed the temp file of an interrupted sqlite build',
    });
    await running.abort();
    await second.abort();
    expect(await readdir(folder)).toEqual(['quotes.db']);
  });

  it("removes a temp file named with this process's id when no build of this process writes it", async () => {
    // In a container every indexer run is process 1: a killed run's file carries the next run's id.
    const folder = join(dir, 'nested');
    await build(path, FIXTURE_QUOTES);
    const orphan = join(folder, `.quotes.db.${process.pid}.0a1b2c.tmp`);
    await writeFile(orphan, 'half a catalogue');
    const running = await createSqliteBuilder({ path });
    const names = await readdir(folder);
    expect(names).not.toContain(`.quotes.db.${process.pid}.0a1b2c.tmp`);
    expect(names.filter((n) => n.endsWith('.tmp'))).toHaveLength(1);
    await running.abort();
    expect(await readdir(folder)).toEqual(['quotes.db']);
  });

  it('refuses a catalogue path that is a directory, or in a directory it cannot write, before any work', async () => {
    await expect(createSqliteBuilder({ path: dir })).rejects.toThrow(
      `the catalogue path '${dir}' is a directory`,
    );
    const file = join(dir, 'plain-file');
    await writeFile(file, 'x');
    await expect(createSqliteBuilder({ path: join(file, 'quotes.db') })).rejects.toThrow(
      /'.*plain-file' is not a directory/,
    );
    // Permission bits do not bind root: the unwritable case runs only where they do.
    if (process.getuid?.() !== 0) {
      const locked = join(dir, 'locked');
      await mkdir(locked, { mode: 0o500 });
      await expect(createSqliteBuilder({ path: join(locked, 'quotes.db') })).rejects.toThrow(
        /^cannot create a file in '.*locked' \(EACCES/,
      );
    }
  });

  it('gives every build a fresh version and leaves no journal or temp files beside the live file', async () => {
    const a = await build(path, FIXTURE_QUOTES);
    const index = open({ reloadCheckMs: 0 });
    await index.list({
      filters: normaliseFilters({ genre: ['romance'] }),
      sort: [],
      page: 1,
      limit: 5,
      fields: null,
    });
    const b = await build(path, FIXTURE_QUOTES);
    expect(b.version).not.toBe(a.version);
    expect(await index.info()).toEqual(b);
    expect(await readdir(join(dir, 'nested'))).toEqual(['quotes.db']);
  });

  it('draws uniformly among sparse matches too', async () => {
    const quotes = [...syntheticQuotes(1000)];
    await build(path, quotes);
    const index = open();
    // author_id 5 holds 11 of 1000 quotes, each in a profile of its own.
    const filters = normaliseFilters({ author_id: ['5'] });
    const expected = quotes.filter((q) => matches(q, filters)).map((q) => q.id);
    expect(expected).toHaveLength(11);
    const counts = new Map<number, number>();
    const draws = 2200;
    for (let i = 0; i < draws; i++) {
      const id = (await index.random(filters, ['id']))?.id as number;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect([...counts.keys()].sort((x, y) => x - y)).toEqual(expected);
    const mean = draws / expected.length;
    const chi = [...counts.values()].reduce((sum, n) => sum + (n - mean) ** 2 / mean, 0);
    // 10 degrees of freedom: P(chi² > 45) ≈ 2e-6 for a uniform draw.
    expect(chi).toBeLessThan(45);
  });

  it('draws uniformly within a length range, one quote or several at a time', async () => {
    const quotes = workLevelQuotes(3000);
    await build(path, quotes);
    const index = open();
    // A narrow range: a few quotes spread over profiles that hold others outside it.
    const lengths = [...new Set(quotes.map((q) => q.quote_length))].sort((x, y) => x - y);
    const length = lengths.find((l) => {
      const n = quotes.filter((q) => q.quote_length === l).length;
      return n >= 8 && n <= 30;
    }) as number;
    const filters = { ranges: { min_length: length, max_length: length } };
    const expected = quotes.filter((q) => q.quote_length === length).map((q) => q.id);
    const counts = new Map<number, number>();
    const draws = 200 * expected.length;
    for (let i = 0; i < draws / 2; i++) {
      const id = (await index.random(filters, ['id']))?.id as number;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (let i = 0; i < draws / 2 / 4; i++) {
      const ids = (await index.randomSample(filters, ['id'], 4)).map((q) => q.id as number);
      expect(new Set(ids).size).toBe(4);
      for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect([...counts.keys()].sort((x, y) => x - y)).toEqual(expected);
    const mean = draws / expected.length;
    const chi = [...counts.values()].reduce((sum, n) => sum + (n - mean) ** 2 / mean, 0);
    // At most 29 degrees of freedom: P(chi² > 75) < 1e-5 for a uniform draw.
    expect(chi).toBeLessThan(75);
  });

  it('returns the reference page under every reading strategy, with or without shared profiles', async () => {
    const catalogues: [string, Quote[]][] = [
      ['quotes sharing their work', workLevelQuotes(4000)],
      ['one profile per quote', [...syntheticQuotes(1500)]],
    ];
    const sorts: SortKey[][] = [
      [],
      [{ field: 'id', direction: 'desc' }],
      [{ field: 'author', direction: 'asc' }],
      [
        { field: 'author', direction: 'desc' },
        { field: 'publish_date', direction: 'asc' },
      ],
      [{ field: 'quote_length', direction: 'desc' }],
      [
        { field: 'quote_length', direction: 'asc' },
        { field: 'author', direction: 'desc' },
      ],
      [
        { field: 'category', direction: 'asc' },
        { field: 'quote_length', direction: 'desc' },
      ],
      [
        { field: 'genre', direction: 'desc' },
        { field: 'work', direction: 'asc' },
        { field: 'id', direction: 'desc' },
      ],
      [
        { field: 'publish_date', direction: 'asc' },
        { field: 'author_id', direction: 'desc' },
      ],
      [{ field: 'work_id', direction: 'desc' }],
      [
        { field: 'category', direction: 'desc' },
        { field: 'genre', direction: 'asc' },
        { field: 'quote_length', direction: 'asc' },
      ],
    ];
    // Forced strategies, and the default choice by cost.
    const strategySets: SqliteCatalogueOptions['strategies'][] = [
      {},
      { id: 'walk', length: 'walk' },
      { id: 'merge', length: 'collect' },
      { id: 'collect', length: 'walk' },
    ];
    let checked = 0;
    for (const [label, quotes] of catalogues) {
      await build(path, quotes);
      const indexes = strategySets.map((strategies) => open({ strategies }));
      const [a, b, c, d] = quotes as [Quote, Quote, Quote, Quote];
      const firstWord = (text: string) => fold(text).split(/[^\p{L}\p{N}]+/u)[0] as string;
      const filterSets: RawFilters[] = [
        {},
        { genre: [a.genre[0] as string] },
        { genre: [a.genre[0] as string, b.genre.at(-1) as string] },
        { category: [c.category], genre: [c.genre[0] as string] },
        { author_id: [String(a.author_id), String(d.author_id)] },
        // Two filters on one key must both hold.
        { author_id: [String(a.author_id), String(b.author_id)], author_like: [firstWord(b.author)] },
        { author_like: [firstWord(c.author).slice(0, 3)], category: [a.category, c.category] },
        { work_like: [firstWord(d.work), `${firstWord(d.work)} ${firstWord(d.work)}`] },
        { work: [d.work], genre: [d.genre[0] as string] },
        { author: [b.author.toUpperCase()] },
        { author_like: ['zzzz'] },
      ];
      for (const raw of filterSets) {
        const filters = normaliseFilters(raw);
        const matching = quotes.filter((q) => matches(q, filters));
        for (const sort of sorts) {
          const expected = [...matching].sort((x, y) => compareQuotes(x, y, sort)).map((q) => q.id);
          const last = Math.max(1, Math.ceil(expected.length / 10));
          for (const page of new Set([1, 2, Math.ceil(last / 2), last, last + 1])) {
            const want = { items: expected.slice((page - 1) * 10, page * 10), total: expected.length };
            for (const [i, index] of indexes.entries()) {
              const result = await index.list({ filters, sort, page, limit: 10, fields: ['id'] });
              expect(
                { items: result.items.map((q) => q.id), total: result.total },
                `${label}, strategies ${JSON.stringify(strategySets[i])}: ${JSON.stringify(raw)} by ${JSON.stringify(sort)}, page ${page}`,
              ).toEqual(want);
              checked++;
            }
          }
        }
      }
      expect(filterSets.filter((raw) => quotes.some((q) => matches(q, normaliseFilters(raw))))).toHaveLength(
        10,
      );
    }
    expect(checked).toBeGreaterThan(3000);
  });

  it('answers length ranges as the reference does: pages of every sort, totals, facets, draws and searches', async () => {
    const quotes = workLevelQuotes(3000);
    await build(path, quotes);
    const indexes = [open(), open({ strategies: { id: 'walk', length: 'walk' } })];
    const lengths = quotes.map((q) => q.quote_length).sort((x, y) => x - y);
    const at = (share: number) => lengths[Math.floor(share * (lengths.length - 1))] as number;
    const [a, b] = quotes as [Quote, Quote];
    const rangeSets: Ranges[] = [
      { min_length: at(0.5) },
      { max_length: at(0.02) },
      { min_length: at(0.1), max_length: at(0.9) },
      { min_length: at(0.3), max_length: at(0.3) },
      { min_length: at(0.2), max_length: at(0.7), published_from: 1820 * 366 },
    ];
    const filterSets: RawFilters[] = [
      {},
      { genre: [a.genre[0] as string] },
      { author_id: [String(a.author_id), String(b.author_id)] },
    ];
    const sorts: SortKey[][] = [
      [],
      [{ field: 'id', direction: 'desc' }],
      [{ field: 'quote_length', direction: 'desc' }],
      [{ field: 'quote_length', direction: 'asc' }],
      [
        { field: 'quote_length', direction: 'desc' },
        { field: 'author', direction: 'asc' },
      ],
      [
        { field: 'quote_length', direction: 'asc' },
        { field: 'id', direction: 'desc' },
      ],
      [{ field: 'author', direction: 'asc' }],
      [
        { field: 'category', direction: 'desc' },
        { field: 'quote_length', direction: 'asc' },
      ],
    ];
    let checked = 0;
    for (const ranges of rangeSets) {
      for (const raw of filterSets) {
        const filters = { ...normaliseFilters(raw), ranges };
        const matching = quotes.filter((q) => matches(q, filters));
        const label = `${JSON.stringify(raw)} in ${JSON.stringify(ranges)}`;
        for (const sort of sorts) {
          const expected = [...matching].sort((x, y) => compareQuotes(x, y, sort)).map((q) => q.id);
          const last = Math.max(1, Math.ceil(expected.length / 10));
          for (const page of new Set([1, 2, Math.ceil(last / 2), last, last + 1])) {
            const want = { items: expected.slice((page - 1) * 10, page * 10), total: expected.length };
            for (const index of indexes) {
              const result = await index.list({ filters, sort, page, limit: 10, fields: ['id'] });
              expect(
                { items: result.items.map((q) => q.id), total: result.total },
                `${label} by ${JSON.stringify(sort)}, page ${page}`,
              ).toEqual(want);
              checked++;
            }
          }
        }
        const index = indexes[0] as CatalogueIndex;
        const facets = await index.facets({ filters, facets: ['category', 'genre'], limit: 100 });
        expect(facets.total, label).toBe(matching.length);
        for (const field of ['category', 'genre'] as const) {
          for (const { value, count } of facets.facets[field] ?? []) {
            const holds = (q: Quote) =>
              field === 'genre'
                ? q.genre.some((g) => fold(g) === fold(value))
                : fold(q.category) === fold(value);
            expect(count, `${label}: ${field} ${value}`).toBe(matching.filter(holds).length);
          }
        }
        const allowed = new Set(matching.map((q) => q.id));
        for (let i = 0; i < 20; i++) {
          const one = await index.random(filters, ['id']);
          expect(one === null ? allowed.size === 0 : allowed.has(one.id as number), label).toBe(true);
        }
        const sample = (await index.randomSample(filters, ['id'], 12)).map((q) => q.id as number);
        expect(new Set(sample).size, label).toBe(Math.min(12, allowed.size));
        expect(
          sample.every((id) => allowed.has(id)),
          label,
        ).toBe(true);
        const directory = index.directory?.() as Directory;
        const authors = await directory.authors({
          filters,
          sort: 'id',
          direction: 'asc',
          page: 1,
          limit: 100,
        });
        const byAuthor = new Map<number, number>();
        for (const m of matching) byAuthor.set(m.author_id, (byAuthor.get(m.author_id) ?? 0) + 1);
        expect(
          authors.items.map((e) => [e.id, e.quote_count]),
          label,
        ).toEqual([...byAuthor.entries()].sort((x, y) => x[0] - y[0]));
        // A search within the range: the search alone, kept to the range by the reference.
        const q = ['quote', 'wor'];
        const all = await index.list({ filters: { q }, sort: [], page: 1, limit: 100_000, fields: ['id'] });
        const inRange = await index.list({
          filters: { ...filters, q },
          sort: [],
          page: 1,
          limit: 100_000,
          fields: ['id'],
        });
        expect(
          inRange.items.map((x) => x.id),
          label,
        ).toEqual(all.items.map((x) => x.id as number).filter((id) => allowed.has(id)));
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it('orders and matches names by code point, also above U+FFFF', async () => {
    const base = FIXTURE_QUOTES[0] as Quote;
    // U+FA0E and U+20000 are letters without decomposition; by code point U+FA0E comes first,
    // whereas UTF-16 code units would put U+20000 (a surrogate pair, 0xD840 …) before it.
    const names: [number, string][] = [
      [1, '\u{FA0E} Writer'],
      [2, '\u{20000} Poet'],
      [3, 'Zola'],
    ];
    const quotes = names.map(([id, author]) => ({ ...base, id, author, author_id: id, work_id: 100 + id }));
    await build(path, quotes);
    const index = open();
    const ids = async (raw: RawFilters, sort: SortKey[] = []) =>
      (
        await index.list({ filters: normaliseFilters(raw), sort, page: 1, limit: 10, fields: ['id'] })
      ).items.map((q) => q.id);
    expect(await ids({}, [{ field: 'author', direction: 'asc' }])).toEqual([3, 1, 2]);
    expect(await ids({}, [{ field: 'author', direction: 'desc' }])).toEqual([2, 1, 3]);
    expect(await ids({ author_like: ['\u{FA0E}'] })).toEqual([1]);
    expect(await ids({ author_like: ['\u{20000}'] })).toEqual([2]);
    expect(await ids({ author_like: ['po'] })).toEqual([2]);
    expect(await ids({ author: ['\u{20000} POET'] })).toEqual([2]);
  });

  it('refuses a file of another format or with damaged columns, and keeps serving its catalogue', async () => {
    const live = await build(path, FIXTURE_QUOTES);
    const { logger, entries } = recordingLogger();
    const index = open({ reloadCheckMs: 0, logger });
    expect(await index.info()).toEqual(live);
    const damages: [string, RegExp][] = [
      ["UPDATE meta SET value = '2' WHERE key = 'format'", /file format 2 is not the supported format/],
      [
        "UPDATE columns SET data = substr(data, 1, 12) WHERE name = 'profile'",
        /profile holds 3 values for 10 quotes/,
      ],
      ["DELETE FROM columns WHERE name = 'length_order'", /the column length_order is missing/],
      ["UPDATE columns SET data = '[1' WHERE name = 'dictionary_genre'", /JSON|dictionary genre/],
    ];
    for (const [damage, reason] of damages) {
      const next = join(dir, 'next.db');
      await build(next, FIXTURE_QUOTES.slice(0, 10));
      const db = new DatabaseSync(next);
      db.exec(damage);
      db.close();
      await rename(next, path);
      // The reader looks, refuses the file, and goes on serving the catalogue it has.
      expect(await index.info(), damage).toEqual(live);
      expect((await index.list({ filters: {}, sort: [], page: 1, limit: 1, fields: ['id'] })).total).toBe(42);
      const error = entries.filter((e) => e.level === 'error').at(-1);
      expect(error?.msg).toBe('sqlite catalogue file could not be opened');
      expect(String(error?.obj.err), damage).toMatch(reason);
    }
    expect(entries.filter((e) => e.level === 'error')).toHaveLength(damages.length);
  });

  it('pages correctly when a filter and the sort key are correlated (the matches all sort last)', async () => {
    // 300 of 3000 quotes have genre "late", and all of them sort last by publish_date: a reader
    // that assumed matches spread evenly over the sort order would look for them in the wrong place.
    const quotes = [...syntheticQuotes(3000)].map((q, i) =>
      i < 2700
        ? q
        : {
            ...q,
            genre: ['late', ...q.genre],
            publish_date: `2100-01-${String((i % 28) + 1).padStart(2, '0')}`,
          },
    );
    await build(path, quotes);
    const index = open();
    const filters = normaliseFilters({ genre: ['late'] });
    const sort: SortKey[] = [{ field: 'publish_date', direction: 'asc' }];
    const query: ListQuery = { filters, sort, page: 2, limit: 5, fields: ['id', 'publish_date'] };
    const expected = quotes
      .filter((q) => matches(q, filters))
      .sort((x, y) => compareQuotes(x, y, sort))
      .slice(5, 10)
      .map((q) => ({ id: q.id, publish_date: q.publish_date }));
    // Twice: the second time with the selection remembered.
    expect(await index.list(query)).toEqual({ items: expected, total: 300 });
    expect(await index.list(query)).toEqual({ items: expected, total: 300 });
    const descending = await index.list({
      ...query,
      sort: [{ field: 'publish_date', direction: 'desc' }],
      page: 1,
    });
    expect(descending.items.every((q) => (q.publish_date as string).startsWith('2100'))).toBe(true);
  });

  it('serves only the old or the new catalogue while builds are committed concurrently', async () => {
    const A = [...syntheticQuotes(300, { label: 'A', firstId: 1, idStep: 2 })];
    const B = [...syntheticQuotes(450, { label: 'B', firstId: 2, idStep: 3 })];
    await build(path, A);
    const index = open({ reloadCheckMs: 0 });
    const filters = normaliseFilters({ author_like: ['author 5'] });
    const sort: SortKey[] = [
      { field: 'work', direction: 'desc' },
      { field: 'publish_date', direction: 'asc' },
    ];
    const expectedPage = (quotes: Quote[]) => {
      const all = quotes.filter((q) => matches(q, filters)).sort((x, y) => compareQuotes(x, y, sort));
      return { items: all.slice(7, 14).map((q) => project(q, QUOTE_FIELDS)), total: all.length };
    };
    const pageA = expectedPage(A);
    const pageB = expectedPage(B);
    expect(pageA.total).not.toBe(pageB.total);
    const byIdA = new Map(A.map((q) => [q.id, q]));
    const byIdB = new Map(B.map((q) => [q.id, q]));

    const rounds = 6;
    const worker = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      (async () => {
        const { createSqliteBuilder } = await import(workerData.builderUrl);
        const { syntheticQuotes } = await import(workerData.fixturesUrl);
        for (let round = 0; round < workerData.rounds; round++) {
          const b = round % 2 === 0;
          const builder = await createSqliteBuilder({ path: workerData.path });
          await builder.add([...(b
            ? syntheticQuotes(450, { label: 'B', firstId: 2, idStep: 3 })
            : syntheticQuotes(300, { label: 'A', firstId: 1, idStep: 2 }))]);
          await builder.commit();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })().then(() => parentPort.postMessage('done'), (error) => parentPort.postMessage(String(error?.stack ?? error)));
      `,
      {
        eval: true,
        workerData: {
          path,
          rounds,
          builderUrl: new URL('./builder.ts', import.meta.url).href,
          fixturesUrl: new URL('../../test-support/fixtures.ts', import.meta.url).href,
        },
      },
    );
    let outcome: string | undefined;
    worker.on('message', (message) => {
      outcome = String(message);
    });
    worker.on('error', (error) => {
      outcome = String(error);
    });

    const seen = new Set<string>();
    let reads = 0;
    try {
      while (outcome === undefined) {
        const page = await index.list({ filters, sort, page: 2, limit: 7, fields: null });
        const label = page.total === pageA.total ? 'A' : 'B';
        expect(page).toEqual(label === 'A' ? pageA : pageB);
        seen.add(label);

        const picked = (await index.random(filters, null)) as Quote;
        expect(picked).not.toBeNull();
        expect([byIdA.get(picked.id), byIdB.get(picked.id)]).toContainEqual(picked);

        // Odd ids exist only in A (1, 3, 5 …), ids 2, 5, 8 … only in B; 5 is in both.
        const five = await index.get(5, null);
        expect([byIdA.get(5), byIdB.get(5)]).toContainEqual(five);
        const seven = await index.get(7, ['id', 'quote']);
        expect([null, { id: 7, quote: byIdA.get(7)?.quote }]).toContainEqual(seven);
        reads++;
        // Let the worker's messages in.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      await worker.terminate();
    }
    expect(outcome).toBe('done');
    // The reader really raced the builds: it saw both catalogues.
    expect(seen).toEqual(new Set(['A', 'B']));
    expect(reads).toBeGreaterThan(rounds);
    // Rounds alternate B, A, …: the last one (round 5) is A, and the reader settles on it.
    expect((await index.info()).count).toBe(300);
  });
});
