import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURE_QUOTES, syntheticQuotes } from '../service/test-support/fixtures.ts';
import {
  byId,
  dataRecord,
  filesIn,
  finished,
  type Run,
  readCatalogue,
  startIndexer,
  writeDataFile,
} from './test-files.ts';

let dir: string;
let dbPath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quotes-cli-'));
  dbPath = join(dir, 'quotes.db');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts the CLI on this test's catalogue file unless told another environment. */
function start(args: string[], env: Record<string, string> = { SQLITE_PATH: dbPath }): ChildProcess {
  return startIndexer(args, env);
}

function run(args: string[], env?: Record<string, string>): Promise<Run> {
  return finished(start(args, env));
}

async function fixtureFile(): Promise<string> {
  return writeDataFile(join(dir, 'fixtures.json'), FIXTURE_QUOTES.map(dataRecord), 'json');
}

describe('usage', () => {
  it('--help explains formats, environment and exit codes', async () => {
    const { code, stdout, stderr } = await run(['--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^Usage: npm run index -- <file>\n/);
    for (const text of [
      'JSON array',
      'NDJSON',
      'SEARCH_BACKEND',
      'SQLITE_PATH',
      'MEILI_HOST',
      'MEILI_ADMIN_KEY',
      'MEILI_API_KEY',
      'MEILI_INDEX',
      'Exit codes',
      'atomically',
    ]) {
      expect(stdout).toContain(text);
    }
  });

  it('a missing file argument is a usage error', async () => {
    expect(await run([])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'indexer: missing <file> (see --help)\nUsage: npm run index -- <file>\n',
    });
  });

  it('an unknown option is a usage error', async () => {
    const { code, stderr } = await run(['--fast', 'quotes.json']);
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toBe("indexer: unknown option '--fast' (see --help)");
  });

  it('a bad environment variable is one line naming it', async () => {
    const file = await fixtureFile();
    expect(await run([file], { SEARCH_BACKEND: 'elastic', SQLITE_PATH: dbPath })).toEqual({
      code: 2,
      stdout: '',
      stderr: "indexer: SEARCH_BACKEND must be one of sqlite, meilisearch, got 'elastic'\n",
    });
    expect(await filesIn(dir)).toEqual(['fixtures.json']);
  });
});

describe('indexing', () => {
  it('ends with exactly one summary line, and the catalogue serves the file', async () => {
    const file = await fixtureFile();
    const { code, stdout, stderr } = await run([file]);

    const { info, quotes } = await readCatalogue(dbPath);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe(
      `indexed ${FIXTURE_QUOTES.length} quotes into sqlite ${dbPath} in ${/[0-9]+\.[0-9]{2}/.exec(stdout)?.[0]} s (version ${info.version})\n`,
    );
    expect(quotes).toEqual(byId(FIXTURE_QUOTES));
  });

  it('prints a warning for ignored fields on stderr, not in the summary', async () => {
    const records = FIXTURE_QUOTES.map((q) => ({ ...dataRecord(q), likes: 3 }));
    const file = await writeDataFile(join(dir, 'quotes.ndjson'), records, 'ndjson');
    const { code, stdout, stderr } = await run([file]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^indexed 42 quotes into sqlite .+\n$/);
    expect(stderr).toBe(`warning: 42 records have unknown fields, ignored: likes (42) (file=${file})\n`);
  });
});

describe('rejected input', () => {
  it('lists every broken record by number, ends with the count, and keeps the previous catalogue', async () => {
    expect((await run([await fixtureFile()])).code).toBe(0);
    const before = await readCatalogue(dbPath);
    const records: unknown[] = [...syntheticQuotes(6, { label: 'N' })].map(dataRecord);
    records[0] = { ...(records[0] as object), genre: [] };
    records[3] = { ...(records[3] as object), work_id: -1, quote: 7 };
    records[5] = 'not an object';
    const file = await writeDataFile(join(dir, 'broken.json'), records, 'json');

    const result = await run([file]);

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: [
        'record 1 (line 2): genre: must hold at least one genre',
        'record 4 (line 47): work_id: must be an integer ≥ 1, got -1',
        'record 4 (line 47): quote: must be a string, got 7',
        'record 6 (line 79): must be a JSON object, got the string "not an object"',
        `indexer: ${file}: 4 problems found; the catalogue was not changed`,
        '',
      ].join('\n'),
    });
    expect(await readCatalogue(dbPath)).toEqual(before);
    expect(await filesIn(dir)).toEqual(['broken.json', 'fixtures.json', 'quotes.db']);
  });

  it('says how many problems are not listed', async () => {
    const records = [...syntheticQuotes(1_002)].map((q) => ({
      ...dataRecord(q),
      source: 'ftp://example.org',
    }));
    const file = await writeDataFile(join(dir, 'broken.ndjson'), records, 'ndjson');
    const { code, stderr } = await run([file]);
    const lines = stderr.trimEnd().split('\n');
    expect(code).toBe(1);
    expect(lines).toHaveLength(1_002);
    expect(lines[999]).toBe(
      'record 1000 (line 1000): source: must be an absolute http or https URL, got "ftp://example.org"',
    );
    expect(lines.slice(1_000)).toEqual([
      '... and 2 more problems',
      `indexer: ${file}: 1002 problems found; the catalogue was not changed`,
    ]);
  });

  it('a missing file is one line', async () => {
    const file = join(dir, 'nowhere.json');
    expect(await run([file])).toEqual({
      code: 1,
      stdout: '',
      stderr: `indexer: cannot open ${file}: no such file\n`,
    });
  });

  it('malformed JSON is one line, and the previous catalogue stays', async () => {
    expect((await run([await fixtureFile()])).code).toBe(0);
    const before = await readCatalogue(dbPath);
    const file = join(dir, 'broken.json');
    await writeFile(file, '[{"id": 1}, {"id": 2');

    const { code, stdout, stderr } = await run([file]);

    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toBe(
      `indexer: ${file} is not valid JSON: unexpected end of file: the array is not closed (line 1)\n`,
    );
    expect(await readCatalogue(dbPath)).toEqual(before);
  });
});

describe('failures and interruption', () => {
  it('a backend that cannot write is exit code 3 with one line', async () => {
    const blocker = join(dir, 'not-a-directory');
    await writeFile(blocker, '');
    const file = await fixtureFile();
    const { code, stdout, stderr } = await run([file], { SQLITE_PATH: join(blocker, 'quotes.db') });
    expect({ code, stdout }).toEqual({ code: 3, stdout: '' });
    expect(stderr).toMatch(/^indexer: the sqlite backend failed: [^\n]*not-a-directory[^\n]*\n$/);
  });

  it('refuses to replace a file at SQLITE_PATH that is not a catalogue, the data file above all', async () => {
    const file = await fixtureFile();
    const original = await readFile(file, 'utf8');
    const itself = await run([file], { SQLITE_PATH: file });
    expect({ code: itself.code, stdout: itself.stdout }).toEqual({ code: 2, stdout: '' });
    expect(itself.stderr).toBe(
      `indexer: SQLITE_PATH ${file} is the data file itself: the catalogue would replace it; choose another path\n`,
    );
    expect(await readFile(file, 'utf8')).toBe(original);

    const notes = join(dir, 'notes.txt');
    await writeFile(notes, 'keep me\n');
    const other = await run([file], { SQLITE_PATH: notes });
    expect({ code: other.code, stdout: other.stdout }).toEqual({ code: 2, stdout: '' });
    expect(other.stderr).toBe(
      `indexer: SQLITE_PATH ${notes} is not a catalogue (not an SQLite database): refusing to replace it; remove it or choose another path\n`,
    );
    expect(await readFile(notes, 'utf8')).toBe('keep me\n');

    // An empty file, and a catalogue from an earlier run, are replaced as before.
    await writeFile(dbPath, '');
    expect((await run([file])).code).toBe(0);
    expect((await run([file])).code).toBe(0);
    expect((await readCatalogue(dbPath)).quotes).toHaveLength(FIXTURE_QUOTES.length);
  });

  it('Ctrl-C discards the build, keeps the previous catalogue and exits 130', async () => {
    expect((await run([await fixtureFile()])).code).toBe(0);
    const before = await readCatalogue(dbPath);
    const file = await writeDataFile(
      join(dir, 'big.ndjson'),
      [...syntheticQuotes(60_000)].map(dataRecord),
      'ndjson',
    );

    const child = start([file]);
    const result = finished(child);
    // The build file appears beside the live one once the run is under way.
    while (!(await readdir(dir)).some((name) => name.endsWith('.tmp'))) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGINT');

    expect(await result).toEqual({
      code: 130,
      stdout: '',
      stderr: 'indexer: indexing was interrupted; the catalogue was not changed\n',
    });
    expect(await readCatalogue(dbPath)).toEqual(before);
    expect(await filesIn(dir)).toEqual(['big.ndjson', 'fixtures.json', 'quotes.db']);
  });
});

describe('data-quality checks', () => {
  /**
   * Eight valid records, one line each, four of them seeded with one fault each: the quote of
   * record 1 again (shouted), record 2's author spelled another way, record 1's work spelled
   * another way, and record 1's work (same title and source) credited to another author.
   */
  async function seededFile(): Promise<string> {
    const records = [...syntheticQuotes(8, { label: 'D' })].map(dataRecord);
    const first = records[0] as Record<string, unknown>;
    const at = (i: number) => records[i] as Record<string, unknown>;
    records[2] = {
      ...at(2),
      author: first.author,
      author_id: first.author_id,
      work: first.work,
      work_id: first.work_id,
      quote: (first.quote as string).toUpperCase(),
    };
    records[4] = { ...at(4), author: 'D  AUTHOR 2', author_id: 99 };
    records[6] = {
      ...at(6),
      author: first.author,
      author_id: first.author_id,
      work: 'd WORK 0',
      work_id: 7777,
    };
    records[7] = { ...at(7), work: first.work, source: first.source };
    return writeDataFile(join(dir, 'seeded.ndjson'), records, 'ndjson');
  }

  const FAULTS = [
    'record 3 (line 3): quote: the same quote by "D Author 1" as record 1 (line 1) (the same folded text and author)',
    'record 5 (line 5): author: "D  AUTHOR 2" is the author "D Author 2" of record 2 (line 2) spelled another way (the same folded name)',
    'record 7 (line 7): work: "d WORK 0" is the work "D Work 0" of record 1 (line 1) spelled another way (the same folded title by the same author)',
    'record 8 (line 8): author: the work "D Work 0" (source "https://example.org/D/0") is credited to "D Author 8" here and to another author in record 1 (line 1)',
  ];

  it('indexes a seeded file, naming each fault as a warning: its records keep the contract rules', async () => {
    const file = await seededFile();

    const result = await run([file]);

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^indexed 8 quotes into sqlite /);
    expect(result.stderr.trimEnd().split('\n')).toEqual(FAULTS.map((f) => `warning: ${f} (file=${file})`));
    expect((await readCatalogue(dbPath)).quotes.map((q) => q.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('--refuse-duplicates names each fault by record and line, and changes nothing', async () => {
    expect((await run([await fixtureFile()])).code).toBe(0);
    const before = await readCatalogue(dbPath);
    const file = await seededFile();

    const result = await run(['--refuse-duplicates', file]);

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: [...FAULTS, `indexer: ${file}: 4 problems found; the catalogue was not changed`, ''].join('\n'),
    });
    expect(await readCatalogue(dbPath)).toEqual(before);
    expect(await filesIn(dir)).toEqual(['fixtures.json', 'quotes.db', 'seeded.ndjson']);
  });

  it('--allow-duplicates, the default, is still accepted; with --refuse-duplicates it is a usage error', async () => {
    const file = await seededFile();
    const allowed = await run(['--allow-duplicates', file]);
    expect(allowed.code).toBe(0);
    expect(allowed.stderr.trimEnd().split('\n')).toHaveLength(FAULTS.length);
    const both = await run(['--refuse-duplicates', '--allow-duplicates', file]);
    expect(both.code).toBe(2);
    expect(both.stderr.split('\n')[0]).toBe(
      'indexer: --refuse-duplicates and --allow-duplicates contradict each other (see --help)',
    );
  });

  it('--refuse-duplicates may come after the file, and takes no value', async () => {
    const file = await seededFile();
    expect((await run([file, '--refuse-duplicates'])).code).toBe(1);
    const { code, stderr } = await run(['--refuse-duplicates=yes', file]);
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toBe("indexer: unknown option '--refuse-duplicates=yes' (see --help)");
  });
});
