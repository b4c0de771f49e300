/** The catalogue of authors and works behind the generated quotes. */
import { choose, clamp, normaliseSegment, Random, table } from './random.ts';
import { pickGenres, uniqueName, uniqueTitle } from './words.ts';

/** Largest `--count` accepted. */
export const MAX_COUNT = 10_000_000;
/** Seed used when none is given. */
export const DEFAULT_SEED = 1;
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

/** What ends a quote's line after its text: the author's language, then the record's end. */
export function lineEnd(language: string): Buffer {
  return Buffer.from(`","language":${JSON.stringify(language)}}\n`);
}

export function checkCount(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
    throw new RangeError(`count must be an integer from 1 to ${MAX_COUNT}, got ${count}`);
  }
}

export function checkSeed(seed: number): void {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
    throw new RangeError(`seed must be an integer from 0 to 4294967295, got ${seed}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Catalogue: authors and their works

export interface Author {
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

export interface Work {
  id: number;
  title: string;
  category: string;
  genre: readonly string[];
  publishDate: string;
  /** `"work":…` through `"source":…`, serialised once. */
  json: string;
}

export interface Catalogue {
  authors: Author[];
  /** Cumulative popularity of authors in id order. */
  authorCumulative: Float64Array;
  works: Work[];
  /** Cumulative popularity of each author's works, per author segment. */
  workCumulative: Float64Array;
}

export function buildCatalogue(count: number, rng: Random): Catalogue {
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
export function sourceOf(workId: number): string {
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
