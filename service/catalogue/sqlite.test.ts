import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FIXTURE_QUOTES, syntheticQuotes } from './fixtures.ts';
import { type CatalogueHarness, describeCatalogueBehaviour } from './port.suite.ts';
import {
  type CatalogueIndex,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  compareQuotes,
  FILTER_NAMES,
  type FilterName,
  type Filters,
  type ListQuery,
  matches,
  normaliseFilters,
  project,
  QUOTE_FIELDS,
  type Quote,
  type RawFilters,
  type SortKey,
} from './port.ts';
import {
  choosePlan,
  type Driver,
  entityFilters,
  type ListPlan,
  openSqliteCatalogue,
  type PageSpec,
  pageSpec,
  pageStatement,
  WALK_BUDGET_FUNCTION,
} from './sqlite.ts';
import { createSqliteBuilder } from './sqlite-builder.ts';

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

describeCatalogueBehaviour('sqlite', async (): Promise<CatalogueHarness> => {
  const dir = await mkdtemp(join(tmpdir(), 'quotes-sqlite-suite-'));
  const path = join(dir, 'quotes.db');
  const opened: CatalogueIndex[] = [];
  return {
    async load(quotes) {
      // Small batches: the build must not depend on receiving everything in one add().
      await build(path, quotes, 7);
      const index = openSqliteCatalogue({ path, reloadCheckMs: 0 });
      opened.push(index);
      return index;
    },
    async teardown() {
      for (const index of opened) await index.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
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

/** How a collect plan driven by each filter finds its quotes (an index, or rowids from quote_genres). */
const DRIVER_INDEX: Record<FilterName, string> = {
  author: '(COVERING )?INDEX quotes_author ',
  work: '(COVERING )?INDEX quotes_work ',
  category: '(COVERING )?INDEX quotes_category',
  genre: 'INTEGER PRIMARY KEY',
  author_id: '(COVERING )?INDEX quotes_author_id',
  work_id: '(COVERING )?INDEX quotes_work_id',
  author_like: '(COVERING )?INDEX quotes_author_id',
  work_like: '(COVERING )?INDEX quotes_work_id',
};

describe('sqlite catalogue', () => {
  let dir: string;
  let path: string;
  const opened: CatalogueIndex[] = [];
  const open = (options: { reloadCheckMs?: number; logger?: CatalogueLogger } = {}) => {
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

  it('draws uniformly among sparse matches too (random offset rather than rejection)', async () => {
    const quotes = [...syntheticQuotes(1000)];
    await build(path, quotes);
    const index = open();
    // author_id 5 holds 11 of 1000 quotes: too sparse for rejection sampling.
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

  it('answers every query with an index: sort walks need no full sort, filters never scan the table', async () => {
    const quotes = [...syntheticQuotes(3000)];
    await build(path, quotes);
    const index = open();
    const db = new DatabaseSync(path, { readOnly: true });
    db.function(WALK_BUDGET_FUNCTION, { varargs: true }, () => 1);
    try {
      const fields = [
        'author',
        'work',
        'category',
        'genre',
        'publish_date',
        'quote_length',
        'author_id',
        'work_id',
      ] as const;
      const sorts: SortKey[][] = [
        ...fields.flatMap((field) => [
          [{ field, direction: 'asc' as const }],
          [{ field, direction: 'desc' as const }],
          [
            { field, direction: 'desc' as const },
            { field: 'id' as const, direction: 'desc' as const },
          ],
        ]),
        [
          { field: 'author', direction: 'asc' },
          { field: 'publish_date', direction: 'desc' },
        ],
        [],
        [{ field: 'id', direction: 'desc' }],
      ];
      const filterSets: RawFilters[] = [
        {},
        { author: ['s author 5'] },
        { work: ['s work 7', 's work 8'] },
        { category: ['poetry'] },
        { genre: ['lyric'] },
        { author_id: ['3'] },
        { work_id: ['405'] },
        { author_like: ['author 4'] },
        { work_like: ['work 38', 'work 1'] },
        { category: ['drama'], genre: ['satire'], author_like: ['s'] },
      ];
      // A share of a grouped sort (category, then date): one category's quotes, by date.
      const poetry = { column: 'category_key', value: 'poetry' };
      const seen = new Set<ListPlan>();
      for (const raw of filterSets) {
        const filters: Filters = normaliseFilters(raw);
        const matching = quotes.filter((q) => matches(q, filters));
        const specs: [PageSpec, number][] = [];
        for (const sort of sorts) {
          for (const page of [1, Math.max(1, Math.ceil(matching.length / 5))]) {
            specs.push([pageSpec({ filters, sort, page, limit: 5, fields: null }), matching.length]);
          }
        }
        const poems = matching.filter((q) => q.category === 'poetry').length;
        specs.push([
          {
            filters,
            groups: [poetry],
            sort: [
              { field: 'publish_date', direction: 'desc' },
              { field: 'id', direction: 'asc' },
            ],
            offset: 0,
            limit: 5,
          },
          poems,
        ]);
        for (const [spec, total] of specs) {
          const entity = entityFilters(spec);
          const entityMatches = entity === null ? null : quotes.filter((q) => matches(q, entity)).length;
          const chosen = choosePlan(spec, total, quotes.length, entityMatches);
          // Every plan that may run must be index-backed: the chosen one, and collect as the
          // fallback of a constrained walk.
          const plans = new Set<ListPlan>([chosen]);
          if (chosen !== 'ordinal' && (spec.groups.length > 0 || total < quotes.length)) plans.add('collect');
          if (entity !== null) plans.add('entity');
          // Collecting may be driven by any one constraint (the one with the fewest matches).
          const drivers: (Driver | null)[] = [
            ...spec.groups.map((_, i) => i),
            ...FILTER_NAMES.filter((name) => (spec.filters[name]?.length ?? 0) > 0),
          ];
          const runs: [ListPlan, Driver | null][] = [...plans].flatMap((plan) =>
            plan === 'collect'
              ? drivers.map((driver): [ListPlan, Driver | null] => [plan, driver])
              : [[plan, null] as [ListPlan, Driver | null]],
          );
          for (const [plan, driver] of runs) {
            seen.add(plan);
            const { sql, params } = pageStatement(spec, plan, ['id'], quotes.length, driver);
            const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params);
            const lines = rows.map((row) => String(row.detail));
            // Lines of the outer query (subqueries, e.g. INTERSECT of word ranges, have their own).
            const outer = rows.filter((row) => row.parent === 0).map((row) => String(row.detail));
            const context = `${plan} (${driver}): ${sql}\n${lines.join('\n')}`;
            if (plan === 'ordinal') {
              // A range of the ord index, ascending or descending.
              expect(outer, context).toHaveLength(1);
              expect(outer[0], context).toMatch(
                /^SEARCH quotes USING (COVERING )?INDEX quotes_ord \(ord[<>]\?\)$/,
              );
            } else if (plan === 'walk') {
              // Following the primary key's index (or the rowid for id) yields the order itself;
              // keys with huge tie groups must not even sort within ties.
              const walked = /INDEXED BY (\w+)/.exec(sql)?.[1];
              const primary = spec.sort[0]?.field ?? 'id';
              if (primary === 'category' || primary === 'genre') {
                expect(
                  outer.filter((line) => line.includes('TEMP B-TREE')),
                  context,
                ).toEqual([]);
              }
              expect(outer, context).not.toContain('USE TEMP B-TREE FOR ORDER BY');
              expect(outer[0], context).toMatch(
                walked === undefined
                  ? /^SCAN quotes$/
                  : new RegExp(`^(SCAN|SEARCH) quotes USING (COVERING )?INDEX ${walked}( \\(.*\\))?$`),
              );
            } else if (plan === 'entity') {
              // The entity's names in key order, then each one's quotes through the id index.
              const table = spec.sort[0]?.field === 'author' ? 'author' : 'work';
              expect(outer[0], context).toMatch(
                new RegExp(`^(SCAN|SEARCH) e USING COVERING INDEX ${table}s_key`),
              );
              expect(outer.filter((line) => line.startsWith('SEARCH quotes'))[0], context).toMatch(
                new RegExp(
                  `^SEARCH quotes USING (COVERING )?INDEX quotes_${table}_id \\(${table}_id=\\?\\)$`,
                ),
              );
              expect(outer, context).not.toContain('USE TEMP B-TREE FOR ORDER BY');
            } else {
              // Collecting the matches: every access to the quotes is an index search, and the
              // first one uses the index of the chosen driving constraint.
              for (const line of outer) expect(line, context).not.toMatch(/^SCAN/);
              const driverIndex =
                typeof driver === 'number'
                  ? `(COVERING )?INDEX quotes_${spec.groups[driver]?.column === 'genre_key' ? 'genre' : 'category'}`
                  : DRIVER_INDEX[driver as FilterName];
              expect(
                outer.find((line) => line.startsWith('SEARCH quotes')),
                context,
              ).toMatch(new RegExp(`^SEARCH quotes USING ${driverIndex}`));
            }
            for (const line of lines) {
              expect(line, context).not.toMatch(/^SCAN (quote_genres|author_words|work_words)/);
              if (/words/.test(line)) {
                expect(line, context).toMatch(/^SEARCH \w+_words USING PRIMARY KEY \(word>\? AND word<\?\)/);
              }
            }
          }
        }
      }
      expect(seen).toEqual(new Set(['ordinal', 'walk', 'entity', 'collect']));
      const random = db.prepare('EXPLAIN QUERY PLAN SELECT id FROM quotes WHERE ord = ?').all(5);
      expect(random.map((row) => row.detail)).toEqual([
        'SEARCH quotes USING COVERING INDEX quotes_ord (ord=?)',
      ]);
      // The plans agree with the reference on the same catalogue, grouped sorts included.
      for (const [raw, sort] of [
        [{ category: ['drama'], genre: ['satire'] }, [{ field: 'quote_length', direction: 'desc' }]],
        [
          {},
          [
            { field: 'category', direction: 'desc' },
            { field: 'genre', direction: 'asc' },
            { field: 'work', direction: 'desc' },
          ],
        ],
        [
          { author_like: ['author 1'] },
          [
            { field: 'genre', direction: 'asc' },
            { field: 'publish_date', direction: 'desc' },
          ],
        ],
        [
          { work_like: ['work 1'] },
          [
            { field: 'work', direction: 'desc' },
            { field: 'quote_length', direction: 'asc' },
          ],
        ],
        [{ author_like: ['author 2'], category: ['poetry'] }, [{ field: 'author', direction: 'asc' }]],
      ] as [RawFilters, SortKey[]][]) {
        const filters = normaliseFilters(raw);
        const expected = quotes.filter((q) => matches(q, filters)).sort((x, y) => compareQuotes(x, y, sort));
        for (const page of [1, 3, Math.ceil(expected.length / 10)]) {
          const result = await index.list({ filters, sort, page, limit: 10, fields: ['id'] });
          const want = expected.slice((page - 1) * 10, page * 10).map((q) => q.id);
          expect(
            result.items.map((q) => q.id),
            `${JSON.stringify(raw)} page ${page}`,
          ).toEqual(want);
        }
      }
    } finally {
      db.close();
    }
  });

  it('returns the reference page under every plan and every driving index', async () => {
    await build(path, FIXTURE_QUOTES);
    const db = new DatabaseSync(path, { readOnly: true });
    db.function(WALK_BUDGET_FUNCTION, { varargs: true }, () => 1);
    try {
      const filterSets: RawFilters[] = [
        { genre: ['gothic'] },
        { genre: ['romance', 'lyric'], category: ['fiction'] },
        { author_like: ['bron', 'o conn'] },
        { author_like: ['e'], work_like: ['the', 'poems'] },
        { author: ['jane austen', 'emily bronte'], work_id: ['101', '301', '302'] },
        { author_id: ['1', '3'], genre: ['tragedy'] },
        { work: ['poems', 'hamlet'], category: ['poetry', 'drama'] },
        { work_like: ['and'], author_id: ['7', '31', '52'] },
      ];
      const sorts: SortKey[][] = [
        [],
        [{ field: 'id', direction: 'desc' }],
        [{ field: 'author', direction: 'desc' }],
        [
          { field: 'work', direction: 'asc' },
          { field: 'id', direction: 'desc' },
        ],
        [{ field: 'genre', direction: 'desc' }],
        [
          { field: 'category', direction: 'asc' },
          { field: 'quote_length', direction: 'desc' },
        ],
        [
          { field: 'publish_date', direction: 'desc' },
          { field: 'author_id', direction: 'asc' },
        ],
      ];
      let checked = 0;
      for (const raw of [{}, ...filterSets]) {
        const filters = normaliseFilters(raw);
        const drivers: (Driver | null)[] = FILTER_NAMES.filter((name) => (filters[name]?.length ?? 0) > 0);
        for (const sort of sorts) {
          const expected = FIXTURE_QUOTES.filter((q) => matches(q, filters))
            .sort((x, y) => compareQuotes(x, y, sort))
            .map((q) => q.id);
          const runs: [ListPlan, Driver | null][] = [['walk', null]];
          if (drivers.length === 0 && (sort[0]?.field ?? 'id') === 'id') runs.push(['ordinal', null]);
          for (const driver of drivers) runs.push(['collect', driver]);
          const spec0 = pageSpec({ filters, sort, page: 1, limit: 3, fields: null });
          if (entityFilters(spec0) !== null) runs.push(['entity', null]);
          for (const [plan, driver] of runs) {
            const ids: number[] = [];
            for (let page = 1; page <= Math.ceil(expected.length / 3); page++) {
              const spec = pageSpec({ filters, sort, page, limit: 3, fields: null });
              const { sql, params } = pageStatement(spec, plan, ['id'], FIXTURE_QUOTES.length, driver);
              ids.push(
                ...db
                  .prepare(sql)
                  .all(...params)
                  .map((row) => Number(row.id)),
              );
              checked++;
            }
            expect(ids, `${plan} (${driver}) ${JSON.stringify(raw)} ${JSON.stringify(sort)}`).toEqual(
              expected,
            );
          }
        }
      }
      expect(checked).toBeGreaterThan(500);
    } finally {
      db.close();
    }
  });

  it('answers correctly when a filter and the sort key are correlated (a walk finds its matches late)', async () => {
    // 300 of 3000 quotes have genre "late", and all of them sort last by publish_date: a walk of
    // the date index expects them spread evenly but finds none in its first 2700 rows.
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
    expect(choosePlan(pageSpec(query), 300, 3000, null)).toBe('walk');
    const expected = quotes
      .filter((q) => matches(q, filters))
      .sort((x, y) => compareQuotes(x, y, sort))
      .slice(5, 10)
      .map((q) => ({ id: q.id, publish_date: q.publish_date }));
    // Twice: once falling back from the walk, once remembering not to walk.
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
          builderUrl: new URL('./sqlite-builder.ts', import.meta.url).href,
          fixturesUrl: new URL('./fixtures.ts', import.meta.url).href,
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
