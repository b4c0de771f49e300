/**
 * Synthetic catalogue generator for scale tests and benchmarks.
 *
 *   node indexer/generate.ts --count N [--seed S] [--out FILE]
 *
 * Writes NDJSON, one quote per line, with every field of docs/api.md#the-quote except
 * `quote_length` (the indexer computes it). The output is a pure function of (count, seed): the
 * same arguments give byte-identical files on any machine, because every choice comes from one
 * seeded PRNG and nothing reads the clock, the locale or Math.random.
 *
 * The shape imitates a real quote collection: about count/150 authors (50 to 10,000) and
 * count/25 works (at most 250,000), each work owned by one author; author and work popularity
 * follow Zipf laws, so a few authors and works hold many quotes; 62 genres; four categories
 * skewed towards fiction; names, titles and texts carry accents, apostrophes and hyphens.
 * Every author name is unique and every title is unique within its author's works, both compared
 * in the contract's folded form, so author_id ↔ author and work_id ↔ (work, author) are
 * one-to-one however a consumer compares them.
 *
 * Memory is bounded by the catalogue of authors and works, never by the number of quotes:
 * quotes are drawn one at a time and written in chunks that respect stream backpressure.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { fold, type Quote } from '../service/catalogue/port.ts';
import { parseCommandLine, UsageError } from '../service/command-line.ts';

/** A generated record: a contract Quote without `quote_length`, which the indexer computes. */
export type GeneratedQuote = Omit<Quote, 'quote_length'>;

/** Largest `--count` accepted. */
export const MAX_COUNT = 10_000_000;
/** Seed used when none is given. */
export const DEFAULT_SEED = 1;
/** Quote texts are between these lengths, in Unicode code points. */
export const QUOTE_MIN_LENGTH = 40;
export const QUOTE_MAX_LENGTH = 600;
/** Publication years lie in this range, so a year is always four digits. */
export const OLDEST_YEAR = 1000;
export const NEWEST_YEAR = 2024;

const MIN_AUTHORS = 50;
const MAX_AUTHORS = 10_000;
const MAX_WORKS = 250_000;
const QUOTES_PER_AUTHOR = 150;
const QUOTES_PER_WORK = 25;
/** Zipf exponent of author popularity: the top 1% of authors hold 20% to 40% of the quotes. */
const AUTHOR_SKEW = 0.9;
/** Zipf exponent of work popularity within one author's works. */
const WORK_SKEW = 0.9;
/** A popular author writes more works, but fewer than in proportion to their quotes. */
const WORKS_PER_POPULARITY = 0.6;
/** Even the most prolific author keeps a believable bibliography. */
const MAX_WORKS_PER_AUTHOR = 400;

/** Number of authors and (about) works the generator invents for `count` quotes. */
export function catalogueSize(count: number): { authors: number; works: number } {
  const authors = clamp(Math.round(count / QUOTES_PER_AUTHOR), MIN_AUTHORS, MAX_AUTHORS);
  const works = clamp(Math.round(count / QUOTES_PER_WORK), authors, MAX_WORKS);
  return { authors, works };
}

/**
 * Yields `count` quotes with ids 1..count in order, deterministic in (count, seed). The catalogue
 * of authors and works is built first; then each quote picks an author by popularity, one of
 * that author's works by popularity, and a fresh text. Records are new objects the caller owns.
 * Throws RangeError for a count outside 1..{@link MAX_COUNT} or a seed outside 0..2^32-1.
 */
export function* generateQuotes(count: number, seed: number = DEFAULT_SEED): Generator<GeneratedQuote> {
  const draws = new Draws(count, seed);
  while (draws.next()) {
    const { author, work } = draws;
    yield {
      id: draws.id,
      author: author.name,
      author_id: author.id,
      work: work.title,
      work_id: work.id,
      category: work.category,
      genre: work.genre.slice(),
      publish_date: work.publishDate,
      source: sourceOf(work.id),
      quote: draws.text.toString(),
      language: author.language,
    };
  }
}

/** An author of the generated catalogue. */
export interface CatalogueAuthor {
  id: number;
  name: string;
  /** The language every quote of the author is written in (ISO 639-1). */
  language: string;
}

/** A work of the generated catalogue; every quote of it carries these values. */
export interface CatalogueWork {
  id: number;
  title: string;
  authorId: number;
  category: string;
  genre: string[];
  publishDate: string;
  source: string;
}

/**
 * The authors and works behind `generateQuotes(count, seed)`, without drawing any quote: what a
 * benchmark needs to pick realistic filter values, and what tests check the catalogue's
 * uniqueness rules on at full scale. Sorted by id. Quotes reference exactly these entries.
 */
export function describeCatalogue(
  count: number,
  seed: number = DEFAULT_SEED,
): { authors: CatalogueAuthor[]; works: CatalogueWork[] } {
  checkCount(count);
  checkSeed(seed);
  const { authors, works } = buildCatalogue(count, new Random(seed));
  const described: CatalogueWork[] = [];
  for (const author of authors) {
    for (let i = author.firstWork; i < author.endWork; i++) {
      const work = works[i] as Work;
      described.push({
        id: work.id,
        title: work.title,
        authorId: author.id,
        category: work.category,
        genre: work.genre.slice(),
        publishDate: work.publishDate,
        source: sourceOf(work.id),
      });
    }
  }
  return {
    authors: authors.map(({ id, name, language }) => ({ id, name, language })),
    works: described.sort((a, b) => a.id - b.id),
  };
}

/**
 * The quotes of {@link generateQuotes} one at a time, without allocating per quote: `next()`
 * advances and sets `id`, `author`, `work` and `text` (valid until the following `next()`).
 */
class Draws {
  id = 0;
  author: Author;
  work: Work;
  readonly text = new TextBuilder();
  readonly #count: number;
  readonly #rng: Random;
  readonly #catalogue: Catalogue;

  constructor(count: number, seed: number) {
    checkCount(count);
    checkSeed(seed);
    this.#count = count;
    this.#rng = new Random(seed);
    this.#catalogue = buildCatalogue(count, this.#rng);
    this.author = this.#catalogue.authors[0] as Author;
    this.work = this.#catalogue.works[0] as Work;
  }

  next(): boolean {
    if (this.id >= this.#count) return false;
    const rng = this.#rng;
    const { authors, authorCumulative, works, workCumulative } = this.#catalogue;
    this.id++;
    this.author = authors[searchCumulative(authorCumulative, 0, authors.length, rng.float())] as Author;
    const position = searchCumulative(
      workCumulative,
      this.author.firstWork,
      this.author.endWork,
      rng.float(),
    );
    this.work = works[position] as Work;
    quoteText(rng, this.text, this.work.category === 'poetry');
    return true;
  }
}

/** Bytes gathered before one write: enough to amortise the call, small enough to stream. */
const CHUNK_BYTES = 1 << 18;
const LINE_START = Buffer.from('{"id":');
const QUOTE_KEY = Buffer.from(',"quote":"');
/** What ends a quote's line after its text: the author's language, then the record's end. */
function lineEnd(language: string): Buffer {
  return Buffer.from(`","language":${JSON.stringify(language)}}\n`);
}
const COMMA = 0x2c;

/**
 * Writes `count` quotes as NDJSON to `out`: each line is exactly `JSON.stringify(record) + '\n'`
 * for the record {@link generateQuotes} yields, assembled from bytes serialised once per author
 * and work (texts never need escaping, see {@link piece}). Waits for 'drain' whenever `write`
 * returns false, and yields to the event loop after other writes, since pipes and files may
 * complete synchronously and report a closed reader (EPIPE) only through an 'error' event.
 * Rejects with the stream's error and stops generating at once; does not end the stream.
 */
export async function writeQuotes(out: Writable, count: number, seed: number = DEFAULT_SEED): Promise<void> {
  let failure: Error | undefined;
  const onError = (error: Error) => {
    failure ??= error;
  };
  out.on('error', onError);
  const check = () => {
    const error = failure ?? out.errored;
    if (error) throw error;
    if (out.destroyed) throw closedError();
  };
  try {
    const draws = new Draws(count, seed);
    let chunk: Buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let used = 0;
    while (draws.next()) {
      const { author, work, text } = draws;
      const size = 40 + author.lineEnd.length + 3 * (author.json.length + work.json.length) + text.length;
      if (used + size > CHUNK_BYTES) {
        check();
        if (out.write(chunk.subarray(0, used))) await new Promise<void>((resolve) => setImmediate(resolve));
        else await drained(out);
        // Never reused: a stream may keep the chunk after its callback (a PassThrough does).
        chunk = Buffer.allocUnsafe(CHUNK_BYTES);
        used = 0;
      }
      chunk.set(LINE_START, used);
      used += LINE_START.length;
      used += chunk.write(String(draws.id), used, 'latin1');
      chunk[used++] = COMMA;
      used += chunk.write(author.json, used);
      chunk[used++] = COMMA;
      used += chunk.write(work.json, used);
      chunk.set(QUOTE_KEY, used);
      used += QUOTE_KEY.length;
      used = text.copyTo(chunk, used);
      chunk.set(author.lineEnd, used);
      used += author.lineEnd.length;
    }
    check();
    if (used > 0 && !out.write(chunk.subarray(0, used))) await drained(out);
    check();
  } finally {
    out.off('error', onError);
  }
}

function closedError(): Error {
  return Object.assign(new Error('output stream closed'), { code: 'ERR_STREAM_DESTROYED' });
}

/** Resolves on 'drain'; rejects if the stream fails or closes first, when no 'drain' would come. */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: Error | null) => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(out.errored ?? closedError());
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}

// ---------------------------------------------------------------------------------------------
// Command line

/** What the command line asks for. */
export type Command =
  | { kind: 'help' }
  | { kind: 'generate'; count: number; seed: number; out: string | null };

export const USAGE = `Usage: node indexer/generate.ts --count N [--seed S] [--out FILE]
       npm run generate -- --count N [--seed S] > quotes.ndjson

Writes N synthetic quotes as NDJSON (one JSON object per line, every field of the contract's
Quote except quote_length) to standard output, or to FILE. The same N and S always give
byte-identical output.

  --count N    number of quotes, 1 to ${MAX_COUNT} (required)
  --seed S     PRNG seed, an integer from 0 to 4294967295 (default ${DEFAULT_SEED})
  --out FILE   write to FILE instead of standard output
  --help       show this help
`;

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** Parses the arguments after the script name (`--name value` or `--name=value`). Throws {@link UsageError}. */
export function parseGenerateArgs(args: readonly string[]): Command {
  if (args.includes('--help') || args.includes('-h')) return { kind: 'help' };
  const { values } = parseCommandLine(args, {
    count: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
  });
  const rawCount = values.count as string | undefined;
  if (rawCount === undefined) throw new UsageError('--count is required (see --help)');
  const count = DECIMAL.test(rawCount) ? Number(rawCount) : Number.NaN;
  if (!(count >= 1 && count <= MAX_COUNT)) {
    throw new UsageError(`--count must be an integer from 1 to ${MAX_COUNT}, got '${rawCount}'`);
  }
  const rawSeed = values.seed as string | undefined;
  const seed = rawSeed === undefined ? DEFAULT_SEED : DECIMAL.test(rawSeed) ? Number(rawSeed) : Number.NaN;
  if (!(seed >= 0 && seed <= 0xffff_ffff)) {
    throw new UsageError(`--seed must be an integer from 0 to 4294967295, got '${rawSeed}'`);
  }
  return { kind: 'generate', count, seed, out: (values.out as string | undefined) ?? null };
}

/** Runs the command line and resolves to the exit status: 0 done, 1 output failed, 2 bad usage. */
export async function main(args: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parseGenerateArgs(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`generate: ${error.message}\n`);
    return 2;
  }
  if (command.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command.out === null) {
    // A reader that leaves early (`| head`) ends the run normally, without a stack trace.
    process.stdout.on('error', () => {});
    try {
      await writeQuotes(process.stdout, command.count, command.seed);
      return 0;
    } catch (error) {
      if (isClosedReader(error)) return 0;
      process.stderr.write(`generate: cannot write to standard output: ${describe(error)}\n`);
      return 1;
    }
  }
  const file = createWriteStream(command.out);
  try {
    await once(file, 'open');
    await writeQuotes(file, command.count, command.seed);
    file.end();
    await once(file, 'finish');
    return 0;
  } catch (error) {
    file.destroy();
    process.stderr.write(`generate: cannot write ${command.out}: ${describe(error)}\n`);
    return 1;
  }
}

function isClosedReader(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function checkCount(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
    throw new RangeError(`count must be an integer from 1 to ${MAX_COUNT}, got ${count}`);
  }
}

function checkSeed(seed: number): void {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
    throw new RangeError(`seed must be an integer from 0 to 4294967295, got ${seed}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Randomness

/**
 * sfc32 (Doty-Humphrey's Small Fast Chaotic generator) seeded through splitmix32: passes
 * PractRand, uses only 32-bit integer arithmetic, and so gives the same stream on every platform.
 */
class Random {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const splitmix = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = Math.imul(s ^ (s >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.#a = splitmix();
    this.#b = splitmix();
    this.#c = splitmix();
    this.#d = splitmix();
    for (let i = 0; i < 12; i++) this.float();
  }

  /** Uniform in [0, 1). */
  float(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    const c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** Standard normal deviate (Box–Muller). */
  normal(): number {
    const u = 1 - this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.float());
  }

  /** A uniformly random permutation of 0..n-1 (Fisher–Yates). */
  permutation(n: number): Int32Array {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) out[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = out[i] as number;
      out[i] = out[j] as number;
      out[j] = t;
    }
    return out;
  }
}

/** A fixed discrete distribution, normalised once so that a draw is one binary search. */
interface Table<T> {
  values: readonly T[];
  cumulative: Float64Array;
}

function table<T>(entries: readonly (readonly [T, number])[]): Table<T> {
  const cumulative = Float64Array.from(entries, ([, weight]) => weight);
  normaliseSegment(cumulative, 0, cumulative.length);
  return { values: entries.map(([value]) => value), cumulative };
}

function choose<T>(rng: Random, { values, cumulative }: Table<T>): T {
  return values[searchCumulative(cumulative, 0, values.length, rng.float())] as T;
}

/** Index in [from, to) of the first cumulative weight above `u`; the segment ends at exactly 1. */
function searchCumulative(cumulative: Float64Array, from: number, to: number, u: number): number {
  let lo = from;
  let hi = to - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cumulative[mid] as number) > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Turns weights in [from, to) into cumulative probabilities ending at exactly 1. */
function normaliseSegment(values: Float64Array, from: number, to: number): void {
  let sum = 0;
  for (let i = from; i < to; i++) {
    sum += values[i] as number;
    values[i] = sum;
  }
  for (let i = from; i < to; i++) values[i] = (values[i] as number) / sum;
  values[to - 1] = 1;
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}

/** A word list written as `a | b | c` over lines (entries may hold spaces, never bars or newlines). */
function list(text: string): readonly string[] {
  return text
    .split(/[|\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

// ---------------------------------------------------------------------------------------------
// Catalogue: authors and their works

interface Author {
  id: number;
  name: string;
  /** `"author":…,"author_id":…`, serialised once. */
  json: string;
  /** ISO 639-1 code of the language of the author's quotes ({@link languageOfAuthor}). */
  language: string;
  /** {@link lineEnd} of that language, serialised once. */
  lineEnd: Buffer;
  /** This author's works are Catalogue.works[firstWork..endWork), most popular first. */
  firstWork: number;
  endWork: number;
}

interface Work {
  id: number;
  title: string;
  category: string;
  genre: readonly string[];
  publishDate: string;
  /** `"work":…` through `"source":…`, serialised once. */
  json: string;
}

interface Catalogue {
  authors: Author[];
  /** Cumulative popularity of authors in id order. */
  authorCumulative: Float64Array;
  works: Work[];
  /** Cumulative popularity of each author's works, per author segment. */
  workCumulative: Float64Array;
}

function buildCatalogue(count: number, rng: Random): Catalogue {
  const size = catalogueSize(count);
  // Popularity ranks are shuffled so that ids say nothing about popularity.
  const authorRank = rng.permutation(size.authors);
  const authorCumulative = Float64Array.from(authorRank, (rank) => (rank + 1) ** -AUTHOR_SKEW);
  const worksPerAuthor = allocateWorks(authorCumulative, size.works);
  normaliseSegment(authorCumulative, 0, size.authors);
  const totalWorks = worksPerAuthor.reduce((sum, n) => sum + n, 0);
  const workIds = rng.permutation(totalWorks);
  const workCumulative = new Float64Array(totalWorks);

  const names = new Set<string>();
  const genreSets = new Map<string, readonly string[]>();
  const authors: Author[] = [];
  const works: Work[] = [];
  for (let a = 0; a < size.authors; a++) {
    const id = a + 1;
    const name = uniqueName(rng, names);
    const home = choose(rng, CATEGORIES);
    const floruit = choose(rng, ERAS)(rng);
    const firstWork = works.length;
    const titles = new Set<string>();
    for (let k = 0; k < (worksPerAuthor[a] as number); k++) {
      workCumulative[works.length] = (k + 1) ** -WORK_SKEW;
      works.push(makeWork(rng, (workIds[works.length] as number) + 1, home, floruit, titles, genreSets));
    }
    normaliseSegment(workCumulative, firstWork, works.length);
    const json = `"author":${JSON.stringify(name)},"author_id":${id}`;
    const language = languageOfAuthor(id);
    authors.push({ id, name, json, language, lineEnd: lineEnd(language), firstWork, endWork: works.length });
  }
  return { authors, authorCumulative, works, workCumulative };
}

/**
 * Languages of the generated catalogue with their share of authors, in percent: mostly English,
 * with French, German and Spanish beside it, as in the bundled catalogue.
 */
const LANGUAGE_SHARES: readonly (readonly [string, number])[] = [
  ['en', 80],
  ['fr', 10],
  ['de', 6],
  ['es', 4],
];

/**
 * The language of an author, a function of the id alone (a multiplicative hash spreads ids over
 * the shares): it draws nothing from the generator's random stream, so every other value of a
 * seed's catalogue is what it was before quotes had a language.
 */
export function languageOfAuthor(id: number): string {
  let slot = Math.imul(id, 0x9e3779b1) >>> 0;
  slot = Math.floor((slot / 2 ** 32) * 100);
  for (const [language, share] of LANGUAGE_SHARES) {
    if (slot < share) return language;
    slot -= share;
  }
  return 'en';
}

function makeWork(
  rng: Random,
  id: number,
  home: string,
  floruit: number,
  titles: Set<string>,
  genreSets: Map<string, readonly string[]>,
): Work {
  // Authors mostly stay in their own category, with occasional excursions.
  const category = rng.chance(0.8) ? home : choose(rng, CATEGORIES);
  const title = uniqueTitle(rng, category, titles);
  const picked = pickGenres(rng, category);
  // Works share a few hundred genre lists; sharing them keeps a large catalogue small.
  const key = picked.join('|');
  const genre = genreSets.get(key) ?? picked;
  genreSets.set(key, genre);
  const publishDate = randomDate(rng, floruit);
  const json =
    `"work":${JSON.stringify(title)},"work_id":${id},"category":${JSON.stringify(category)},` +
    `"genre":${JSON.stringify(genre)},"publish_date":"${publishDate}","source":"${sourceOf(id)}"`;
  // A round trip through UTF-8 flattens the concatenation into one compact string (a third of
  // the memory of the pieces it was built from, which a 250,000-work catalogue notices).
  return { id, title, category, genre, publishDate, json: Buffer.from(json).toString() };
}

/** The work's record; a function of its id, so not stored with every work. */
function sourceOf(workId: number): string {
  return `https://example.org/works/${workId}`;
}

/**
 * Works per author: at least one each, more for popular authors, growing sublinearly with
 * popularity; the scale is bisected so that the total comes close to `target`.
 */
function allocateWorks(weights: Float64Array, target: number): number[] {
  const scaled = Float64Array.from(weights, (w) => w ** WORKS_PER_POPULARITY);
  const allot = (scale: number) =>
    Array.from(scaled, (w) => clamp(Math.round(w * scale), 1, MAX_WORKS_PER_AUTHOR));
  let lo = 0;
  let hi = target * weights.length;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (allot(mid).reduce((sum, n) => sum + n, 0) < target) lo = mid;
    else hi = mid;
  }
  return allot(hi);
}

const CATEGORIES = table([
  ['fiction', 50],
  ['nonfiction', 22],
  ['poetry', 17],
  ['drama', 11],
] as const);

/** When authors flourished: mostly the last two centuries, a long tail back to the year 1000. */
const ERAS = table<(rng: Random) => number>([
  [(rng) => rng.between(1000, 1499), 8],
  [(rng) => rng.between(1500, 1799), 20],
  [(rng) => rng.between(1800, 1899), 30],
  [(rng) => rng.between(1900, 2010), 42],
]);

/** Older works are more often dated to the year only. */
const PRECISION = {
  medieval: table([
    ['year', 70],
    ['month', 15],
    ['day', 15],
  ] as const),
  early: table([
    ['year', 35],
    ['month', 20],
    ['day', 45],
  ] as const),
  modern: table([
    ['year', 15],
    ['month', 20],
    ['day', 65],
  ] as const),
};

function randomDate(rng: Random, floruit: number): string {
  const year = clamp(floruit + rng.between(-15, 40), OLDEST_YEAR, NEWEST_YEAR);
  const form = choose(
    rng,
    year < 1500 ? PRECISION.medieval : year < 1900 ? PRECISION.early : PRECISION.modern,
  );
  if (form === 'year') return String(year);
  const month = rng.between(1, 12);
  const mm = String(month).padStart(2, '0');
  if (form === 'month') return `${year}-${mm}`;
  const day = rng.between(1, daysInMonth(year, month));
  return `${year}-${mm}-${String(day).padStart(2, '0')}`;
}

/** Proleptic Gregorian calendar, as ISO 8601 dates use. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// ---------------------------------------------------------------------------------------------
// Author names

const FIRST_NAMES = list(`
  Jane | Charlotte | Emily | Anne | George | Mary | William | Virginia | James | Henry | Thomas
  Edith | Herman | Walt | Toni | Ursula | Doris | Iris | Oscar | Samuel | John | Elizabeth
  Margaret | Katherine | Sylvia | Langston | Zora | Ralph | Flannery | Truman | Zoë | Émile | José
  Søren | Jean-Paul | Anaïs | François | Chloé | Björn | Åsa | Jürgen | Gabriel | Gabriela | Inés
  Joaquín | Ramón | Sofía | Mário | João | Fernão | Léa | Hélène | Simone | Marguerite | Honoré
  Stéphane | Jérôme | André | René | Renée | Noël | Gaël | Michał | Łukasz | Wisława | Czesław
  Bohumil | Milan | Jiří | Dóra | Sándor | Endre | Fyodor | Anton | Leo | Anna | Marina | Nikolai
  Olga | Ivan | Halldór | Sigríður | Knut | Henrik | Selma | Astrid | Tove | Karin | Giovanni
  Dante | Elsa | Italo | Natalia | Umberto | Primo | Hermann | Rainer | Günter | Ingeborg | Franz
  Heinrich | Chinua | Wole | Ngũgĩ | Chimamanda | Nadine | Naguib | Orhan | Elif | Nazım | Haruki
  Yukio | Kenzaburō | Banana | Mo | Lu | Mei | Arundhati | Rabindranath | Salman | Kiran | Jhumpa
  Octavio | Jorge | Julio | Mario | Isabel | Pablo | Rosalía | Federico | Clarice | Maya | Seamus
  Siobhán | Máire | Eavan | Brendan | Aoife | Tadhg | Dylan | Gwen | Rhys
`);

const LAST_NAMES = list(`
  Austen | Brontë | Eliot | Woolf | Joyce | Hardy | Wharton | Melville | Whitman | Morrison
  Le Guin | Lessing | Murdoch | Wilde | Beckett | Shelley | Mansfield | Plath | Hughes | Hurston
  Ellison | O'Connor | O'Brien | O'Casey | D'Annunzio | L'Engle | Capote | Keats | Zola | Sartre
  Kierkegaard | Nin | Mauriac | Balzac | Mallarmé | Camus | Pérez | García | Márquez | Cortázar
  Borges | Neruda | Lorca | Allende | Saramago | Pessoa | Lispector | Núñez | Muñoz | Ibáñez
  Gómez | Martínez | Sánchez | Gonçalves | Magalhães | Camões | Szymborska | Miłosz | Lem
  Żeromski | Hrabal | Kundera | Čapek | Hašek | Márai | Ady | Dostoevsky | Chekhov | Tolstoy
  Akhmatova | Tsvetaeva | Gogol | Turgenev | Laxness | Lagerlöf | Lindgren | Jansson | Boye
  Hamsun | Undset | Strindberg | Ørsted | Bjørnson | Boccaccio | Alighieri | Morante | Calvino
  Ginzburg | Eco | Levi | Hesse | Rilke | Grass | Bachmann | Kafka | Böll | Müller | Mann | Achebe
  Soyinka | Adichie | Gordimer | Mahfouz | Pamuk | Şafak | Hikmet | Murakami | Mishima | Ōe
  Yoshimoto | Ng | Yan | Xun | Roy | Tagore | Rushdie | Desai | Lahiri | Paz | Fuentes | Rulfo
  Heaney | Ní Dhomhnaill | Boland | Behan | Thomas | Evans | Nguyễn | Trần | Lê | Çelik | Yılmaz
  Ångström | Ekström | Fontaine | Lévi | Bérénger | Duras | Colette | Proust | Hugo | Verne
  Stendhal
`);

/** Prefixed to a last name now and then: `van der Berg`, `de la Cruz`. */
const PARTICLES = ['van', 'van der', 'van den', 'de', 'de la', 'del', 'da', 'di', 'von', 'le', 'du', 'ter'];
const PARTICLE_NAMES = list(`
  Berg | Cruz | Velde | Heuvel | Vega | Rosa | Silva | Lampedusa | Kleist | Fanu | Bellay | Horst
`);
const INITIALS = 'ABCDEFGHIJKLMNOPRSTVWZ';

/**
 * A name no other author has, compared in folded form (so `Zoe Bronte` and `Zoë Brontë` never
 * both exist): middle initials tell namesakes apart, as library catalogues do.
 */
function uniqueName(rng: Random, used: Set<string>): string {
  const first = rng.pick(FIRST_NAMES);
  const roll = rng.float();
  const last =
    roll < 0.08
      ? `${rng.pick(PARTICLES)} ${rng.pick(PARTICLE_NAMES)}`
      : roll < 0.13
        ? `${rng.pick(LAST_NAMES)}-${rng.pick(LAST_NAMES)}`
        : rng.pick(LAST_NAMES);
  if (claim(used, `${first} ${last}`)) return `${first} ${last}`;
  const initials = shuffledInitials(rng);
  for (const middle of initials) {
    if (claim(used, `${first} ${middle} ${last}`)) return `${first} ${middle} ${last}`;
  }
  for (const middle of initials) {
    for (const second of initials) {
      if (claim(used, `${first} ${middle} ${second} ${last}`)) return `${first} ${middle} ${second} ${last}`;
    }
  }
  // Unreachable below MAX_AUTHORS: every (first, last) pair offers hundreds of variants.
  throw new Error(`no free name left for ${first} ${last}`);
}

function shuffledInitials(rng: Random): string[] {
  return Array.from(rng.permutation(INITIALS.length), (i) => `${INITIALS[i]}.`);
}

/** Adds the folded form of `text` to `used`; false when it was already there. */
function claim(used: Set<string>, text: string): boolean {
  const key = fold(text);
  if (used.has(key)) return false;
  used.add(key);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Work titles

const TITLE_NOUNS = list(`
  River | Night | Garden | Silence | Winter | Mirror | Stranger | House | Sea | Light | Shadow
  Memory | Clock | Orchard | Island | Letter | Song | Storm | Bell | Harvest | Crown | Empire
  Journey | Window | Fire | Ashes | Dream | Road | Season | Widow | Pilgrim | Lantern | Mountain
  Wolf | Raven | Tide | Voyage | Exile | Café | Soirée | Fiancée | Naïveté | Élan | Façade
  Protégé | Château | Fjord | Daughter | Father | Orphan | Sailor | Inheritance | Bridge | Harbour
  Forest | Desert | Tower | Promise | Masquerade | Labyrinth | Carnival | Requiem | Sonata
  Anatomy | Education | Rebellion
`);
const TITLE_ADJECTIVES = list(`
  Silent | Last | Broken | Golden | Hidden | Long | Distant | Bitter | Little | Secret | Forgotten
  Quiet | Burning | Invisible | Savage | Gentle | Crimson | Northern | Sleeping | Naïve | Blasé
  Errant | Wandering | Drowned | Sentimental | Unfinished | Second | Iron
`);
const PLACES = list(`
  Zürich | Kraków | Málaga | São Paulo | Reykjavík | Montréal | Córdoba | Tromsø | Besançon
  Dublin | Prague | Lisbon | Kyoto | Lagos | Odessa | Vienna | Gdańsk | Göteborg | Sevilla
  Bogotá | Mérida | Alexandria | Trieste | Samarkand | Valparaíso | Côte d'Ivoire | Hà Nội
`);
const CHARACTER_NAMES = list(`
  Hedda | Medea | Célestine | Ophélie | Tomás | Irène | Oedipus | Yerma | Nora | Ödön
`);
const NUMBER_WORDS = ['Two', 'Three', 'Seven', 'Twelve', 'Forty', 'Hundred'];

/**
 * Title patterns per category, with weights. Slots: {N} noun, {A} adjective, {P} place,
 * {C} character, {#} number word.
 */
const TITLE_PATTERNS: Record<string, Table<string>> = {
  fiction: table([
    ['The {N}', 3],
    ['The {A} {N}', 4],
    ['{N} and {N}', 3],
    ['The {N} of the {A} {N}', 2],
    ['A {N} in {P}', 2],
    ['{A} {N}', 2],
    ["The {N}'s {N}", 1],
  ]),
  poetry: table([
    ['Songs of the {N}', 3],
    ['Elegies for {P}', 2],
    ['{#} Sonnets', 1],
    ['The {A} {N} and Other Poems', 3],
    ['Odes to {N} and {N}', 2],
    ['The {A} {N}', 3],
    ['{N}', 2],
  ]),
  drama: table([
    ['{C}', 2],
    ['The {N}: A Tragedy', 2],
    ['{C} in {P}', 2],
    ['A {N} for {C}', 2],
    ['The {A} {N}', 3],
    ['{N} and {N}', 2],
  ]),
  nonfiction: table([
    ['Essays on {N}', 3],
    ['A History of {P}', 2],
    ['On {N}', 2],
    ['The Philosophy of {N}', 2],
    ['Letters from {P}', 2],
    ['Notes on the {A} {N}', 2],
    ['The {N} and the {N}', 2],
  ]),
};
const SLOTS: Record<string, readonly string[]> = {
  N: TITLE_NOUNS,
  A: TITLE_ADJECTIVES,
  P: PLACES,
  C: CHARACTER_NAMES,
  '#': NUMBER_WORDS,
};

function title(rng: Random, category: string): string {
  const patterns = TITLE_PATTERNS[category] ?? (TITLE_PATTERNS.fiction as Table<string>);
  return choose(rng, patterns).replace(/\{(.)\}/g, (_, slot: string) => rng.pick(SLOTS[slot] ?? []));
}

/** A title this author has not used yet (folded), so that (work, author) names one work. */
function uniqueTitle(rng: Random, category: string, used: Set<string>): string {
  for (let attempt = 0; attempt < 8; attempt++) {
    const candidate = title(rng, category);
    if (claim(used, candidate)) return candidate;
  }
  // A prolific author ran out of luck with the patterns: number the volumes, as publishers do.
  const base = title(rng, category);
  for (let volume = 2; ; volume++) {
    if (claim(used, `${base}, Volume ${volume}`)) return `${base}, Volume ${volume}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Genres: 62 in all, most tied to a category, a few that any category borrows.

const GENRES: Record<string, readonly string[]> = {
  fiction: list(`
    literary fiction | historical fiction | science fiction | fantasy | mystery | romance | crime
    thriller | horror | adventure | gothic | magical realism | dystopian | coming-of-age
    Bildungsroman | roman à clef | epistolary | picaresque | noir | children's literature
  `),
  nonfiction: list(`
    philosophy | history | biography | memoir | essay | science | politics | religion | economics
    psychology | travel | nature writing | ethics | journalism | sociology | art criticism
  `),
  poetry: list(`
    lyric poetry | epic poetry | sonnet | free verse | haiku | elegy | ode | ballad | pastoral
    romantic poetry | modernist poetry | chanson de geste
  `),
  drama: list(`
    tragedy | comedy | tragicomedy | farce | melodrama | absurdist drama | historical drama
    commedia dell'arte
  `),
};
const SHARED_GENRES = list('satire | humor | allegory | mythology | classics | feminism');
const GENRE_COUNT = table([
  [1, 50],
  [2, 35],
  [3, 15],
] as const);

/** One to three distinct genres, the category's first-listed (popular) ones most often. */
function pickGenres(rng: Random, category: string): string[] {
  const own = GENRES[category] ?? (GENRES.fiction as readonly string[]);
  const n = choose(rng, GENRE_COUNT);
  const out: string[] = [];
  while (out.length < n) {
    const genre = rng.chance(0.12)
      ? rng.pick(SHARED_GENRES)
      : (own[Math.floor(rng.float() ** 2 * own.length)] as string);
    if (!out.includes(genre)) out.push(genre);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Quote texts: pseudo-sentences from a small grammar over word lists.
//
// Texts are assembled from words encoded to UTF-8 once, in a reused buffer: building them as
// strings cost most of the generator's time in concatenating and then flattening many small
// strings. The object API decodes the buffer; the NDJSON writer copies the bytes as they are.

/** A word or literal, pre-encoded: its UTF-8 bytes and its length in code points. */
interface Piece {
  bytes: Uint8Array;
  points: number;
  /** Takes the article `an` (vowel, accented vowel, silent h). */
  an: boolean;
}

const TAKES_AN = /^(?:[aeiouàâéèêîôûü]|hon)/;

/**
 * Encodes one piece of text. Pieces may not hold characters JSON escapes (quotation mark,
 * backslash, controls), so a text made of them is valid inside a JSON string as it stands.
 */
function piece(text: string): Piece {
  if (JSON.stringify(text) !== `"${text}"`) throw new Error(`word list entry needs JSON escaping: ${text}`);
  let points = 0;
  for (const _ of text) points++;
  return { bytes: Buffer.from(text), points, an: TAKES_AN.test(text) };
}

function pieces(texts: readonly string[]): Piece[] {
  return texts.map(piece);
}

/** A quote under construction: UTF-8 bytes in a reused buffer, and its length in code points. */
class TextBuilder {
  // Room for the longest text plus one sentence that is then rolled back, 3 bytes per code point.
  readonly #bytes = Buffer.allocUnsafe(8 * QUOTE_MAX_LENGTH);
  /** Length in bytes. */
  length = 0;
  /** Length in code points. */
  points = 0;

  add(piece: Piece): void {
    const bytes = this.#bytes;
    const source = piece.bytes;
    let at = this.length;
    for (let i = 0; i < source.length; i++) bytes[at++] = source[i] as number;
    this.length = at;
    this.points += piece.points;
  }

  /** Copies the text into `target` at `offset`; returns the offset after it. */
  copyTo(target: Buffer, offset: number): number {
    return offset + this.#bytes.copy(target, offset, 0, this.length);
  }

  toString(): string {
    return this.#bytes.toString('utf8', 0, this.length);
  }
}

const DETERMINERS = list(`
  the | the | the | a | every | no | this | that | my | your | his | her | our | their | one
`);
const ADJECTIVES = list(`
  old | quiet | bright | last | small | strange | cruel | kind | tender | bitter | endless
  patient | broken | honest | hidden | wild | gentle | foolish | wise | restless | silent | empty
  golden | forgotten | familiar | distant | unspoken | ordinary | proud | lonely | true | false
  dark | pale | sudden | slow | ancient | hungry | faithful | weary | secret | burning | cold
`);
const NOUNS = list(`
  heart | river | night | house | letter | voice | window | garden | city | sea | road | name
  door | child | stranger | friend | mother | father | king | soldier | poet | book | morning
  evening | winter | summer | storm | mirror | shadow | candle | song | silence | promise | secret
  grave | fire | mountain | harbour | bridge | clock | field | wound | island | lamp | sister
  brother | widow | ship | wall | bread | rain | snow | stone | bird | horse | ghost | crown
`);
/** Borrowed words, drawn now and then instead of an English one: where most accents come from. */
const LOANWORD_RATE = 0.05;
const LOAN_ADJECTIVES = list('naïve | blasé | passé | outré | soigné | déclassé | risqué | über-cool');
const LOAN_NOUNS = list(`
  café | rôle | élan | façade | fiancée | soirée | protégé | mêlée | naïveté | crème brûlée
  déjà vu | tête-à-tête | smörgåsbord | fjord | piñata | jalapeño | señora | über-critic | doppelgänger
`);
const ABSTRACT = list(`
  love | time | memory | truth | hope | grief | silence | beauty | courage | solitude | freedom
  history | desire | fear | joy | death | justice | patience | pride | longing
`);
const PRONOUNS = list('he | she | it | nobody | everyone | someone');
const VERBS = list(`
  remembers | forgets | becomes | carries | follows | waits for | breaks | keeps | loses | finds
  loves | fears | hides | teaches | returns to | speaks of | dreams of | forgives | betrays
  outlives | mistakes | reveals | devours | answers | resembles | longs for
`);
const ADVERBS = list(`
  slowly | always | never | quietly | still | again | perhaps | only | already | tenderly
  at last
`);

const FOREIGN = list(`
  c'est la vie | je ne sais quoi | carpe diem | raison d’être | joie de vivre | Weltschmerz
  saudade | mañana | à bientôt | noblesse oblige | Schadenfreude | amor fati | déjà vu
  dolce far niente | l’esprit de l’escalier | Sehnsucht | tout passe | ¿y por qué no?
`);

/** Lower-case forms for inside a sentence and capitalised forms for its start, encoded once. */
function forms(texts: readonly string[]): { inner: Piece[]; initial: Piece[] } {
  return { inner: pieces(texts), initial: pieces(texts.map(capitalise)) };
}

const W = {
  determiners: forms(DETERMINERS),
  adjectives: pieces(ADJECTIVES),
  nouns: pieces(NOUNS),
  loanAdjectives: pieces(LOAN_ADJECTIVES),
  loanNouns: pieces(LOAN_NOUNS),
  abstract: forms(ABSTRACT),
  pronouns: forms(PRONOUNS),
  verbs: pieces(VERBS),
  adverbs: forms(ADVERBS),
  foreign: forms(FOREIGN),
  conjunctions: pieces([', and ', ', but ', '; ', ' — ', ', for ', ', yet ', ', so ']),
};
const L = {
  space: piece(' '),
  line: piece(' / '),
  an: piece('an'),
  An: piece('An'),
  is: piece(' is '),
  of: piece(' of '),
  commaSpace: piece(', '),
  said: piece(' said.'),
  saidOpen: piece(' said, “'),
  closeQuote: piece('.”'),
  thereIsNo: piece('There is no '),
  without: piece(' without '),
  whatIs: piece('What is '),
  but: piece(' but '),
  period: piece('.'),
  question: piece('?'),
  exclamation: piece('!'),
  ellipsis: piece('…'),
};

function pick(rng: Random, items: readonly Piece[]): Piece {
  return items[rng.int(items.length)] as Piece;
}

function nounPhrase(rng: Random, t: TextBuilder, initial: boolean): void {
  if (rng.chance(0.2)) {
    t.add(pick(rng, initial ? W.abstract.initial : W.abstract.inner));
    return;
  }
  const noun = pick(rng, rng.chance(LOANWORD_RATE) ? W.loanNouns : W.nouns);
  const adjective = rng.chance(0.45)
    ? pick(rng, rng.chance(LOANWORD_RATE) ? W.loanAdjectives : W.adjectives)
    : null;
  const d = rng.int(DETERMINERS.length);
  if (DETERMINERS[d] === 'a' && (adjective ?? noun).an) t.add(initial ? L.An : L.an);
  else t.add((initial ? W.determiners.initial : W.determiners.inner)[d] as Piece);
  t.add(L.space);
  if (adjective !== null) {
    t.add(adjective);
    t.add(L.space);
  }
  t.add(noun);
}

function subject(rng: Random, t: TextBuilder, initial: boolean): void {
  if (rng.chance(0.25)) t.add(pick(rng, initial ? W.pronouns.initial : W.pronouns.inner));
  else nounPhrase(rng, t, initial);
}

function clause(rng: Random, t: TextBuilder, initial: boolean): void {
  const kind = rng.int(6);
  subject(rng, t, initial);
  if (kind === 1) {
    t.add(L.is);
    t.add(pick(rng, W.adjectives));
    return;
  }
  t.add(L.space);
  if (kind === 0) {
    t.add(pick(rng, W.adverbs.inner));
    t.add(L.space);
  }
  t.add(pick(rng, W.verbs));
  t.add(L.space);
  nounPhrase(rng, t, false);
  if (kind === 2) {
    t.add(L.of);
    nounPhrase(rng, t, false);
  }
}

function sentence(rng: Random, t: TextBuilder): void {
  const kind = rng.int(20);
  if (kind === 0) {
    const a = rng.int(ABSTRACT.length);
    const b = (a + 1 + rng.int(ABSTRACT.length - 1)) % ABSTRACT.length;
    t.add(L.thereIsNo);
    t.add(W.abstract.inner[a] as Piece);
    t.add(L.without);
    t.add(W.abstract.inner[b] as Piece);
    t.add(L.period);
  } else if (kind === 1) {
    t.add(L.whatIs);
    t.add(pick(rng, W.abstract.inner));
    t.add(L.but);
    nounPhrase(rng, t, false);
    t.add(L.question);
  } else if (kind === 2) {
    t.add(pick(rng, W.foreign.initial));
    t.add(L.commaSpace);
    t.add(pick(rng, W.pronouns.inner));
    t.add(L.said);
  } else if (kind === 3) {
    subject(rng, t, true);
    t.add(L.saidOpen);
    clause(rng, t, true);
    t.add(L.closeQuote);
  } else {
    if (kind === 4) {
      t.add(pick(rng, W.adverbs.initial));
      t.add(L.commaSpace);
      clause(rng, t, false);
    } else {
      clause(rng, t, true);
    }
    if (rng.chance(0.4)) {
      t.add(pick(rng, W.conjunctions));
      clause(rng, t, false);
    }
    const end = rng.float();
    t.add(end < 0.85 ? L.period : end < 0.93 ? L.exclamation : L.ellipsis);
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Writes into `t` a quote of 40 to 600 code points, log-normal around 130: many short
 * aphorisms, a long tail of passages. Sentences are added until the drawn length is reached;
 * one that would pass the maximum is taken back (any one sentence is far shorter than the
 * 560 code points that leaves). Verse is quoted as lines joined by " / ", as collections print it.
 */
function quoteText(rng: Random, t: TextBuilder, verse: boolean): void {
  const target = clamp(Math.round(130 * Math.exp(0.6 * rng.normal())), QUOTE_MIN_LENGTH, QUOTE_MAX_LENGTH);
  t.length = 0;
  t.points = 0;
  sentence(rng, t);
  while (t.points < target) {
    const { length, points } = t;
    t.add(verse ? L.line : L.space);
    sentence(rng, t);
    if (t.points > QUOTE_MAX_LENGTH) {
      t.length = length;
      t.points = points;
      break;
    }
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
