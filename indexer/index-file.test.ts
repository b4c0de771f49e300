import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CatalogueLogger, Quote } from '../service/catalogue/port.ts';
import { type Config, loadConfig } from '../service/config.ts';
import { FIXTURE_QUOTES, syntheticQuotes } from '../service/test-support/fixtures.ts';
import {
  BATCH_SIZE,
  IndexAbortedError,
  IndexInputError,
  type IndexSummary,
  IndexValidationError,
  indexFile,
} from './index-file.ts';
import { byId, dataRecord, filesIn, readCatalogue, writeDataFile } from './test-files.ts';

let dir: string;
let dbPath: string;
let config: Config;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quotes-index-'));
  dbPath = join(dir, 'quotes.db');
  config = loadConfig({ SQLITE_PATH: dbPath });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The error `promise` rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  const result = await promise.then(
    () => null,
    (error: unknown) => error as Error,
  );
  if (result === null) throw new Error('expected a rejection');
  return result;
}

/** Indexes the fixture catalogue and returns what it serves, as the "previous catalogue" of a test. */
async function indexFixtures(): Promise<Awaited<ReturnType<typeof readCatalogue>>> {
  const file = await writeDataFile(join(dir, 'fixtures.json'), FIXTURE_QUOTES.map(dataRecord), 'json');
  await indexFile(file, config);
  return readCatalogue(dbPath);
}

describe('a valid file', () => {
  it('becomes the catalogue, with genre strings made arrays and quote_length computed', async () => {
    const records = FIXTURE_QUOTES.map(dataRecord);
    // One record with a single-string genre and a wrong quote_length, as found in the wild.
    const single = FIXTURE_QUOTES.find((q) => q.genre.length === 1) as Quote;
    const index = FIXTURE_QUOTES.indexOf(single);
    records[index] = { ...records[index], genre: single.genre[0], quote_length: 1 };
    const file = await writeDataFile(join(dir, 'quotes.json'), records, 'json');

    const summary = await indexFile(file, config);

    const { info, quotes } = await readCatalogue(dbPath);
    expect(quotes).toEqual(byId(FIXTURE_QUOTES));
    expect(summary).toEqual({
      records: FIXTURE_QUOTES.length,
      seconds: expect.any(Number),
      version: info.version,
      warnings: [],
    });
    expect(info.count).toBe(FIXTURE_QUOTES.length);
    // Only the live file remains: the build was renamed into place.
    expect(await filesIn(dir)).toEqual(['quotes.db', 'quotes.json']);
  });

  it('gives the same catalogue from a JSON array and from NDJSON', async () => {
    const records = [...syntheticQuotes(1_200, { label: 'F' })].map(dataRecord);
    const json = await writeDataFile(join(dir, 'quotes.json'), records, 'json');
    const ndjson = await writeDataFile(join(dir, 'quotes.ndjson'), records, 'ndjson');
    const fromJson = join(dir, 'from-json.db');
    const fromNdjson = join(dir, 'from-ndjson.db');

    await indexFile(json, loadConfig({ SQLITE_PATH: fromJson }));
    await indexFile(ndjson, loadConfig({ SQLITE_PATH: fromNdjson }));

    const a = await readCatalogue(fromJson);
    const b = await readCatalogue(fromNdjson);
    expect(a.quotes).toEqual([...syntheticQuotes(1_200, { label: 'F' })]);
    expect(b.quotes).toEqual(a.quotes);
    expect(b.info.version).not.toBe(a.info.version);
  });

  it('reports progress up to the whole file', async () => {
    const records = [...syntheticQuotes(500)].map(dataRecord);
    const file = await writeDataFile(join(dir, 'quotes.ndjson'), records, 'ndjson');
    const calls: [number, number, number][] = [];

    await indexFile(file, config, { onProgress: (...args) => calls.push(args) });

    const size = Buffer.byteLength(records.map((r) => JSON.stringify(r)).join('\n')) + 1;
    expect(calls.at(-1)).toEqual([500, size, size]);
  });

  it('ignores unknown fields, and says so once', async () => {
    const records = FIXTURE_QUOTES.map((q, i) => (i < 3 ? { ...dataRecord(q), mood: 'wry' } : dataRecord(q)));
    const file = await writeDataFile(join(dir, 'quotes.ndjson'), records, 'ndjson');
    const warnings: string[] = [];
    const logger: CatalogueLogger = { info() {}, warn: (_obj, msg) => warnings.push(msg ?? ''), error() {} };

    const summary = await indexFile(file, config, { logger });

    expect(summary.warnings).toEqual(['3 records have unknown fields, ignored: mood (3)']);
    expect(warnings).toEqual(summary.warnings);
    expect((await readCatalogue(dbPath)).quotes).toEqual(byId(FIXTURE_QUOTES));
  });
});

describe('a rejected file leaves the previous catalogue in place', () => {
  it('reports every broken record by number, and changes nothing', async () => {
    const before = await indexFixtures();
    const records: unknown[] = [...syntheticQuotes(8, { label: 'N' })].map(dataRecord);
    records[1] = { ...(records[1] as object), author_id: '2' };
    records[4] = { ...(records[4] as object), publish_date: '1850-02-30', source: 'not a url' };
    records[6] = { ...(records[6] as object), id: 1 };
    const file = await writeDataFile(join(dir, 'broken.ndjson'), records, 'ndjson');

    const error = await rejection(indexFile(file, config));

    expect(error).toBeInstanceOf(IndexValidationError);
    const { problems, total, message } = error as IndexValidationError;
    expect(problems).toEqual([
      { record: 2, line: 2, field: 'author_id', message: 'must be an integer ≥ 1, got the string "2"' },
      { record: 5, line: 5, field: 'publish_date', message: 'is not a calendar date: "1850-02-30"' },
      {
        record: 5,
        line: 5,
        field: 'source',
        message: 'must be an absolute http or https URL, got "not a url"',
      },
      { record: 7, line: 7, field: 'id', message: 'id 1 is already used by record 1' },
    ]);
    expect(total).toBe(4);
    expect(message).toBe(`${file}: 4 problems found; the catalogue was not changed`);
    expect(await readCatalogue(dbPath)).toEqual(before);
    expect(await filesIn(dir)).toEqual(['broken.ndjson', 'fixtures.json', 'quotes.db']);
  });

  it('reports an NDJSON line that is not JSON with its line number, among the other problems', async () => {
    const before = await indexFixtures();
    const lines = [...syntheticQuotes(3, { label: 'N' })].map((q) => JSON.stringify(dataRecord(q)));
    lines.splice(1, 0, '', '{"id": 9, "author": "broken');
    lines.push(
      JSON.stringify({ ...dataRecord([...syntheticQuotes(4, { label: 'N' })][3] as Quote), quote: '' }),
    );
    const file = join(dir, 'broken.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);

    const error = (await rejection(indexFile(file, config))) as IndexValidationError;

    expect(error).toBeInstanceOf(IndexValidationError);
    expect(error.problems).toEqual([
      { record: 2, line: 3, message: expect.stringMatching(/^not valid JSON: /) },
      { record: 5, line: 6, field: 'quote', message: 'must not be empty or only white space' },
    ]);
    expect(await readCatalogue(dbPath)).toEqual(before);
  });

  it('lists at most 1000 problems and counts the rest', async () => {
    const records = [...syntheticQuotes(1_500)].map((q) => ({ ...dataRecord(q), category: '' }));
    const file = await writeDataFile(join(dir, 'broken.json'), records, 'json');

    const error = (await rejection(indexFile(file, config))) as IndexValidationError;

    expect(error.problems).toHaveLength(1_000);
    expect(error.problems[999]).toEqual({
      record: 1_000,
      line: expect.any(Number),
      field: 'category',
      message: 'must not be empty or only white space',
    });
    expect(error.total).toBe(1_500);
    expect(await filesIn(dir)).toEqual(['broken.json']);
  });

  it('is reported in full even when the backend fails first, and a valid file then gets the backend error', async () => {
    // A catalogue path below a regular file: the builder fails on the first batch.
    await writeFile(join(dir, 'plain'), '');
    const failing = loadConfig({ SQLITE_PATH: join(dir, 'plain', 'quotes.db') });
    const records: unknown[] = [...syntheticQuotes(BATCH_SIZE + 100, { label: 'F' })].map(dataRecord);
    const original = records[BATCH_SIZE + 50];
    records[BATCH_SIZE + 50] = { ...(original as object), publish_date: '1850-02-30' };
    const broken = await writeDataFile(join(dir, 'broken.ndjson'), records, 'ndjson');

    const rejected = await rejection(indexFile(broken, failing));

    expect(rejected).toBeInstanceOf(IndexValidationError);
    expect((rejected as IndexValidationError).problems).toEqual([
      {
        record: BATCH_SIZE + 51,
        line: BATCH_SIZE + 51,
        field: 'publish_date',
        message: 'is not a calendar date: "1850-02-30"',
      },
    ]);

    records[BATCH_SIZE + 50] = original;
    const valid = await writeDataFile(join(dir, 'valid.ndjson'), records, 'ndjson');
    const failed = await rejection(indexFile(valid, failing));
    expect(failed).not.toBeInstanceOf(IndexValidationError);
    expect(failed.message).toMatch(/plain/);
    expect(await filesIn(dir)).toEqual(['broken.ndjson', 'plain', 'valid.ndjson']);
  });

  it('a missing file is a one-line input error, and no catalogue is created', async () => {
    const file = join(dir, 'absent.json');
    const error = await rejection(indexFile(file, config));
    expect(error).toBeInstanceOf(IndexInputError);
    expect(error.message).toBe(`cannot open ${file}: no such file`);
    expect(await filesIn(dir)).toEqual([]);
  });

  it('malformed JSON is a one-line input error', async () => {
    const before = await indexFixtures();
    const file = join(dir, 'broken.json');
    await writeFile(file, '[\n{"id": 1, "author": "Jane Austen"},\n{"id": 2 "author": "Emily Brontë"}\n]\n');

    const error = await rejection(indexFile(file, config));

    expect(error).toBeInstanceOf(IndexInputError);
    expect(error.message).toMatch(
      new RegExp(`^${file} is not valid JSON in record 2 \\(line 3\\): [^\\n]+$`),
    );
    expect(await readCatalogue(dbPath)).toEqual(before);
    expect(await filesIn(dir)).toEqual(['broken.json', 'fixtures.json', 'quotes.db']);
  });

  it('a file without records is an input error', async () => {
    const before = await indexFixtures();
    const file = join(dir, 'empty.json');
    await writeFile(file, '[]\n');

    const error = await rejection(indexFile(file, config));

    expect(error).toBeInstanceOf(IndexInputError);
    expect(error.message).toBe(`${file} holds no records`);
    expect(await readCatalogue(dbPath)).toEqual(before);
  });

  it('an aborted run discards its build', async () => {
    const before = await indexFixtures();
    const file = await writeDataFile(
      join(dir, 'next.ndjson'),
      [...syntheticQuotes(100)].map(dataRecord),
      'ndjson',
    );
    const controller = new AbortController();
    controller.abort();

    const error = await rejection(indexFile(file, config, { signal: controller.signal }));

    expect(error).toBeInstanceOf(IndexAbortedError);
    expect(await readCatalogue(dbPath)).toEqual(before);
    expect(await filesIn(dir)).toEqual(['fixtures.json', 'next.ndjson', 'quotes.db']);
  });
});

/**
 * A reader in another process, querying in a loop while this process replaces the catalogue.
 * Prints "ready" after its first answer; when its stdin closes it prints every distinct
 * observation (labels of the quotes on the page, total, page size) with how often it was seen.
 */
const READER = `
import { openSqliteCatalogue } from ${JSON.stringify(new URL('../service/catalogue/sqlite/catalogue.ts', import.meta.url).href)};
const catalogue = openSqliteCatalogue({ path: process.argv[1], reloadCheckMs: 0 });
let running = true;
process.stdin.on('end', () => { running = false; });
process.stdin.resume();
const seen = new Map();
for (let n = 0; running; n++) {
  const page = (n % 3) + 1;
  const sort = n % 2 === 0 ? [] : [{ field: 'author', direction: 'desc' }];
  try {
    const { items, total } = await catalogue.list({ filters: {}, sort, page, limit: 100, fields: ['quote'] });
    const labels = [...new Set(items.map((q) => q.quote.split(' ')[0]))].sort();
    const key = JSON.stringify({ labels, total, size: items.length, page });
    seen.set(key, (seen.get(key) ?? 0) + 1);
  } catch (error) {
    seen.set('error: ' + error.message, (seen.get('error: ' + error.message) ?? 0) + 1);
  }
  if (n === 0) process.stdout.write('ready\\n');
  await new Promise((resolve) => setImmediate(resolve));
}
await catalogue.close();
process.stdout.write(JSON.stringify([...seen]) + '\\n');
`;

describe('replacing a catalogue while a reader queries it', () => {
  it('the reader sees the old catalogue or the new one, never a mix', async () => {
    const sizes = { A: 300, B: 500 } as const;
    const files = {
      A: await writeDataFile(
        join(dir, 'a.ndjson'),
        [...syntheticQuotes(sizes.A, { label: 'A' })].map(dataRecord),
        'ndjson',
      ),
      B: await writeDataFile(
        join(dir, 'b.json'),
        [...syntheticQuotes(sizes.B, { label: 'B' })].map(dataRecord),
        'json',
      ),
    };
    await indexFile(files.A, config);

    const reader = spawn(process.execPath, ['--input-type=module', '-e', READER, dbPath], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => reader.on('exit', resolve));
    const lines = createInterface({ input: reader.stdout })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('ready');

    const summaries: IndexSummary[] = [];
    for (const label of ['B', 'A', 'B', 'A', 'B', 'A'] as const) {
      summaries.push(await indexFile(files[label], config));
      // Give the reader a moment on each catalogue.
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    reader.stdin.end();
    const observations = new Map<string, number>(JSON.parse((await lines.next()).value as string));
    expect(await exited).toBe(0);

    expect(new Set(summaries.map((s) => s.version)).size).toBe(6);
    const allowed = new Set<string>();
    for (const label of ['A', 'B'] as const) {
      for (const page of [1, 2, 3]) {
        const size = Math.min(100, sizes[label] - (page - 1) * 100);
        allowed.add(JSON.stringify({ labels: [label], total: sizes[label], size, page }));
      }
    }
    const unexpected = [...observations.keys()].filter((key) => !allowed.has(key));
    expect(unexpected).toEqual([]);
    // Both catalogues were really observed, so the check above had something to check.
    const seenLabels = new Set([...observations.keys()].map((key) => JSON.parse(key).labels[0]));
    expect(seenLabels).toEqual(new Set(['A', 'B']));
  });
});
