import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codePointLength, fold } from '../service/catalogue/port.ts';
import { UsageError } from '../service/command-line.ts';
import {
  catalogueSize,
  DEFAULT_SEED,
  describeCatalogue,
  type GeneratedQuote,
  generateQuotes,
  MAX_COUNT,
  NEWEST_YEAR,
  OLDEST_YEAR,
  parseGenerateArgs,
  QUOTE_MAX_LENGTH,
  QUOTE_MIN_LENGTH,
  writeQuotes,
} from './generate.ts';

const SCRIPT = fileURLToPath(new URL('./generate.ts', import.meta.url));
const FIELDS = [
  'id',
  'author',
  'author_id',
  'work',
  'work_id',
  'category',
  'genre',
  'publish_date',
  'source',
  'quote',
  'language',
];
const CATEGORIES = ['fiction', 'nonfiction', 'poetry', 'drama'];
const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;

/** Everything docs/api.md#the-quote asks of one record (bar quote_length), as messages. */
function contractProblems(record: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const fail = (message: string) => problems.push(`record ${String(record.id)}: ${message}`);
  if (JSON.stringify(Object.keys(record)) !== JSON.stringify(FIELDS))
    fail(`keys ${Object.keys(record).join(',')}`);
  for (const key of ['id', 'author_id', 'work_id']) {
    const value = record[key];
    if (!Number.isSafeInteger(value) || (value as number) < 1) fail(`${key} is not an integer ≥ 1`);
  }
  for (const key of ['author', 'work', 'quote']) {
    const value = record[key];
    if (typeof value !== 'string' || fold(value) === '') fail(`${key} is not a non-empty string`);
  }
  if (!CATEGORIES.includes(record.category as string)) fail(`category ${String(record.category)}`);
  const genre = record.genre;
  if (
    !Array.isArray(genre) ||
    genre.length < 1 ||
    genre.length > 3 ||
    genre.some((g) => typeof g !== 'string' || fold(g) === '') ||
    new Set(genre.map((g: string) => fold(g))).size !== genre.length
  ) {
    fail(`genre ${JSON.stringify(genre)}`);
  }
  if (!isCalendarDate(record.publish_date)) fail(`publish_date ${String(record.publish_date)}`);
  try {
    const url = new URL(record.source as string);
    if (url.protocol !== 'https:' || url.href !== record.source) fail(`source ${String(record.source)}`);
  } catch {
    fail(`source ${String(record.source)}`);
  }
  if (typeof record.quote === 'string') {
    const length = codePointLength(record.quote);
    if (length < QUOTE_MIN_LENGTH || length > QUOTE_MAX_LENGTH) fail(`quote of ${length} code points`);
  }
  if (!['en', 'fr', 'de', 'es'].includes(record.language as string))
    fail(`language ${String(record.language)}`);
  return problems;
}

function isCalendarDate(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const match = DATE.exec(value);
  if (match === null) return false;
  const year = Number(match[1]);
  const month = match[2] === undefined ? 1 : Number(match[2]);
  const day = match[3] === undefined ? 1 : Number(match[3]);
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    year >= OLDEST_YEAR &&
    year <= NEWEST_YEAR &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day
  );
}

function countBy<T>(items: readonly T[], key: (item: T) => string | number): Map<string | number, number> {
  const counts = new Map<string | number, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/** Share of all quotes held by the most quoted 1% (at least one) of the keys. */
function topPercentShare(counts: Map<string | number, number>, total: number): number {
  const sorted = [...counts.values()].sort((a, b) => b - a);
  const top = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 100)));
  return top.reduce((sum, n) => sum + n, 0) / total;
}

function runCli(args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 20_000 });
}

const N = 20_000;
let quotes: GeneratedQuote[];

beforeAll(() => {
  quotes = [...generateQuotes(N, DEFAULT_SEED)];
});

describe('generateQuotes determinism', () => {
  it('gives identical records for the same count and seed, and the default seed is 1', () => {
    const a = JSON.stringify([...generateQuotes(2_000, 7)]);
    expect(JSON.stringify([...generateQuotes(2_000, 7)])).toBe(a);
    expect(JSON.stringify([...generateQuotes(500)])).toBe(JSON.stringify([...generateQuotes(500, 1)]));
  });

  it('gives a different catalogue and different texts for a different seed', () => {
    const a = [...generateQuotes(2_000, 7)];
    const b = [...generateQuotes(2_000, 8)];
    const sameText = a.filter((q, i) => q.quote === b[i]?.quote).length;
    expect(sameText).toBeLessThan(20);
    const namesA = new Set(a.map((q) => q.author));
    const namesB = new Set(b.map((q) => q.author));
    expect([...namesA].filter((name) => namesB.has(name)).length).toBeLessThan(namesA.size / 2);
  });

  it('rejects counts and seeds outside their ranges', () => {
    expect(() => generateQuotes(0).next()).toThrow(RangeError);
    expect(() => generateQuotes(MAX_COUNT + 1).next()).toThrow(RangeError);
    expect(() => generateQuotes(10, 1.5).next()).toThrow(RangeError);
    expect(() => generateQuotes(10, -1).next()).toThrow(RangeError);
  });
});

describe('generated records follow the contract (N = 20,000)', () => {
  it('every record has exactly the Quote fields but quote_length, each valid', () => {
    const problems = quotes.flatMap((q) => contractProblems(q as unknown as Record<string, unknown>));
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('every author writes in one language; English most, French, German and Spanish beside it', () => {
    const languageOf = new Map<number, string>();
    const counts = new Map<string, number>();
    for (const q of quotes) {
      expect(languageOf.get(q.author_id) ?? q.language).toBe(q.language);
      languageOf.set(q.author_id, q.language as string);
    }
    for (const language of languageOf.values()) counts.set(language, (counts.get(language) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(['de', 'en', 'es', 'fr']);
    expect(counts.get('en') as number).toBeGreaterThan(languageOf.size / 2);
  });

  it('ids are 1..N in order', () => {
    expect(quotes).toHaveLength(N);
    expect(quotes.every((q, i) => q.id === i + 1)).toBe(true);
  });

  it('author_id and author name are one-to-one, also in folded form', () => {
    const nameOf = new Map<number, string>();
    const idOf = new Map<string, number>();
    for (const q of quotes) {
      expect(nameOf.get(q.author_id) ?? q.author).toBe(q.author);
      expect(idOf.get(fold(q.author)) ?? q.author_id).toBe(q.author_id);
      nameOf.set(q.author_id, q.author);
      idOf.set(fold(q.author), q.author_id);
    }
  });

  it('work_id and (work, author) are one-to-one, and a work always has the same details', () => {
    const workOf = new Map<number, string>();
    const idOf = new Map<string, number>();
    for (const q of quotes) {
      const details = JSON.stringify([q.work, q.author_id, q.category, q.genre, q.publish_date, q.source]);
      expect(workOf.get(q.work_id) ?? details).toBe(details);
      const key = `${fold(q.work)}\u0000${q.author_id}`;
      expect(idOf.get(key) ?? q.work_id).toBe(q.work_id);
      workOf.set(q.work_id, details);
      idOf.set(key, q.work_id);
    }
  });

  it('uses all three publish_date forms', () => {
    const forms = countBy(quotes, (q) => q.publish_date.length);
    expect(new Set(forms.keys())).toEqual(new Set([4, 7, 10]));
  });
});

describe('generated distributions (N = 20,000)', () => {
  it('has about N/150 authors, N/25 works and some sixty genres', () => {
    expect(new Set(quotes.map((q) => q.author_id)).size).toBeGreaterThanOrEqual(Math.round((N / 150) * 0.8));
    expect(new Set(quotes.map((q) => q.author_id)).size).toBeLessThanOrEqual(Math.round(N / 150));
    const works = new Set(quotes.map((q) => q.work_id)).size;
    expect(works).toBeGreaterThanOrEqual((N / 25) * 0.75);
    expect(works).toBeLessThanOrEqual((N / 25) * 1.1);
    const genres = new Set(quotes.flatMap((q) => q.genre)).size;
    expect(genres).toBeGreaterThanOrEqual(50);
    expect(genres).toBeLessThanOrEqual(70);
  });

  it('skews popularity: the top 1% of authors and of works hold many times their share', () => {
    expect(
      topPercentShare(
        countBy(quotes, (q) => q.author_id),
        N,
      ),
    ).toBeGreaterThan(0.1);
    expect(
      topPercentShare(
        countBy(quotes, (q) => q.work_id),
        N,
      ),
    ).toBeGreaterThan(0.05);
  });

  it('uses every category, fiction the most', () => {
    const categories = countBy(quotes, (q) => q.category);
    expect([...categories.keys()].sort()).toEqual([...CATEGORIES].sort());
    const sorted = [...categories.entries()].sort((a, b) => b[1] - a[1]);
    expect(sorted[0]?.[0]).toBe('fiction');
    for (const [, n] of sorted) expect(n / N).toBeGreaterThan(0.05);
  });

  it('writes accented letters in some quotes, names and titles', () => {
    const accented = (text: string) => text.normalize('NFD') !== text;
    const share = quotes.filter((q) => accented(q.quote)).length / N;
    expect(share).toBeGreaterThan(0.05);
    expect(share).toBeLessThan(0.8);
    expect(quotes.some((q) => accented(q.author))).toBe(true);
    expect(quotes.some((q) => accented(q.work))).toBe(true);
  });

  it('quote lengths spread from short aphorisms to long passages', () => {
    const lengths = quotes.map((q) => codePointLength(q.quote)).sort((a, b) => a - b);
    expect(lengths[Math.floor(N * 0.1)]).toBeLessThan(100);
    expect(lengths[Math.floor(N * 0.99)]).toBeGreaterThan(400);
  });
});

describe('catalogue at full scale', () => {
  it('sizes the catalogue from the count', () => {
    expect(catalogueSize(1)).toEqual({ authors: 50, works: 50 });
    const million = catalogueSize(1_000_000);
    expect(million.authors).toBeGreaterThan(5_000);
    expect(million.authors).toBeLessThan(8_000);
    expect(million.works).toBeGreaterThan(20_000);
    expect(million.works).toBeLessThan(60_000);
    const max = catalogueSize(MAX_COUNT);
    expect(max.authors).toBeLessThanOrEqual(10_000);
    expect(max.works).toBeLessThanOrEqual(250_000);
  });

  it('at 1M quotes, names are unique when folded and titles unique per author', () => {
    const { authors, works } = describeCatalogue(1_000_000, 3);
    expect(authors.map((a) => a.id)).toEqual(authors.map((_, i) => i + 1));
    expect(new Set(authors.map((a) => fold(a.name))).size).toBe(authors.length);
    expect(new Set(works.map((w) => w.id)).size).toBe(works.length);
    expect(works.length).toBeGreaterThan(catalogueSize(1_000_000).works * 0.95);
    expect(new Set(works.map((w) => `${w.authorId}\u0000${fold(w.title)}`)).size).toBe(works.length);
    // Namesakes are told apart by middle initials; names carry the punctuation real ones do.
    expect(authors.some((a) => /^\S+ [A-Z]\. /.test(a.name))).toBe(true);
    for (const mark of ["'", '-', ' van ', ' de ']) {
      expect(authors.some((a) => a.name.includes(mark))).toBe(true);
    }
    expect(new Set(works.flatMap((w) => w.genre)).size).toBe(62);
    expect(works.filter((w) => !isCalendarDate(w.publishDate)).map((w) => w.publishDate)).toEqual([]);
  });

  it('quotes reference the described catalogue exactly', () => {
    const { authors, works } = describeCatalogue(N, DEFAULT_SEED);
    const authorName = new Map(authors.map((a) => [a.id, a.name]));
    const workById = new Map(works.map((w) => [w.id, w]));
    for (const q of quotes) {
      const work = workById.get(q.work_id);
      expect(authorName.get(q.author_id)).toBe(q.author);
      expect(work).toEqual({
        id: q.work_id,
        title: q.work,
        authorId: q.author_id,
        category: q.category,
        genre: q.genre,
        publishDate: q.publish_date,
        source: q.source,
      });
    }
  });
});

/** An in-memory stream that accepts one chunk per turn of the event loop. */
class SlowSink extends Writable {
  chunks: Buffer[] = [];
  constructor() {
    super({ highWaterMark: 1024 });
  }
  override _write(chunk: Buffer, _encoding: string, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    setImmediate(callback);
  }
}

describe('writeQuotes', () => {
  it('writes exactly JSON.stringify of each record, one per line, through backpressure', async () => {
    const sink = new SlowSink();
    let waits = 0;
    sink.on('drain', () => waits++);
    await writeQuotes(sink, 3_000, 11);
    const expected = [...generateQuotes(3_000, 11)].map((q) => `${JSON.stringify(q)}\n`).join('');
    expect(Buffer.concat(sink.chunks).toString('utf8')).toBe(expected);
    expect(waits).toBeGreaterThan(0);
  });

  it('stops and rejects with the error when the stream fails', async () => {
    let written = 0;
    const failing = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written += chunk.length;
        callback(Object.assign(new Error('disk full'), { code: 'ENOSPC' }));
      },
    });
    await expect(writeQuotes(failing, 100_000)).rejects.toThrow('disk full');
    // One chunk went out (a quarter of a megabyte), not the forty megabytes asked for.
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(1 << 20);
  });
});

describe('parseGenerateArgs', () => {
  it('reads --count, --seed and --out in either form', () => {
    expect(parseGenerateArgs(['--count', '3'])).toEqual({ kind: 'generate', count: 3, seed: 1, out: null });
    expect(parseGenerateArgs(['--seed=42', '--count=10', '--out', 'q.ndjson'])).toEqual({
      kind: 'generate',
      count: 10,
      seed: 42,
      out: 'q.ndjson',
    });
    expect(parseGenerateArgs(['--count', String(MAX_COUNT), '--seed', '4294967295'])).toMatchObject({
      count: MAX_COUNT,
      seed: 4294967295,
    });
    expect(parseGenerateArgs(['--count', 'x', '--help'])).toEqual({ kind: 'help' });
  });

  it.each([
    [[], '--count is required (see --help)'],
    [['--count', '0'], "--count must be an integer from 1 to 10000000, got '0'"],
    [['--count', '10000001'], "--count must be an integer from 1 to 10000000, got '10000001'"],
    [['--count', '1e3'], "--count must be an integer from 1 to 10000000, got '1e3'"],
    [['--count', '007'], "--count must be an integer from 1 to 10000000, got '007'"],
    [['--count'], '--count needs a value (see --help)'],
    [['--count', '5', '--seed=-1'], "--seed must be an integer from 0 to 4294967295, got '-1'"],
    [['--count', '5', '--seed', '-1'], '--seed needs a value (see --help)'],
    [['--count=', '5'], '--count needs a value (see --help)'],
    [['--count', '5', '--count', '6'], '--count given more than once'],
    [['--count', '5', '--verbose'], "unknown option '--verbose' (see --help)"],
    [['--count', '5', 'extra'], "unexpected argument 'extra' (see --help)"],
  ])('rejects %j', (args, message) => {
    expect(() => parseGenerateArgs(args)).toThrow(new UsageError(message));
  });
});

describe('command line', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'generate-test-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('--count 3 prints three valid JSON lines, the same as the generator', () => {
    const result = runCli(['--count', '3', '--seed', '5']);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    const records = lines.slice(0, 3).map((line) => JSON.parse(line));
    expect(records.flatMap(contractProblems)).toEqual([]);
    expect(records).toEqual([...generateQuotes(3, 5)]);
  });

  it('--out writes the same bytes as standard output', () => {
    const file = join(dir, 'quotes.ndjson');
    const toFile = runCli(['--count', '2000', '--seed', '9', '--out', file]);
    expect(toFile.status).toBe(0);
    expect(toFile.stdout).toBe('');
    const toStdout = runCli(['--count', '2000', '--seed', '9']);
    expect(readFileSync(file, 'utf8')).toBe(toStdout.stdout);
    expect(toStdout.stdout.split('\n')).toHaveLength(2001);
  });

  it('a bad flag exits 2 with one line on standard error and nothing on standard output', () => {
    const result = runCli(['--count', '3', '--colour']);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe("generate: unknown option '--colour' (see --help)\n");
  });

  it('--help prints the usage and exits 0', () => {
    const result = runCli(['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: node indexer\/generate\.ts --count N/);
  });

  it('an unwritable --out file exits 1 with one line', () => {
    const result = runCli(['--count', '3', '--out', join(dir, 'missing', 'q.ndjson')]);
    expect(result.status).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^generate: cannot write .*ENOENT/);
  });

  it('stops quietly when the reader goes away (| head)', async () => {
    const child = spawn(process.execPath, [SCRIPT, '--count', String(MAX_COUNT)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (c, s) => resolve([c, s])),
    );
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  }, 20_000);
});
