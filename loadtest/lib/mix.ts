/**
 * The realistic request mix, shared by the k6 scripts (throughput, soak, spike) and the Node
 * benchmark (`npm run bench`), so both measure the same traffic.
 *
 * Pure TypeScript on purpose: no k6 module and no Node API, so it type-checks under both
 * `loadtest/tsconfig.json` (k6) and the root tsconfig (Node), and runs in both runtimes.
 *
 * Filter values are never invented: they come from a {@link Vocabulary} sampled from the running
 * service itself (a few `GET /quotes?limit=100` pages), so every request of the mix matches
 * something and answers 200 on any catalogue: the bundled data, a generated one, or a user's own.
 */
import type { Quote } from '../../service/catalogue/fields.ts';
import { QUOTE_FIELDS } from './shape.ts';

/** The fields a vocabulary sample needs, fetched with `fields=` to keep the sample small. */
export const SAMPLE_FIELDS = 'id,author,author_id,work,work_id,category,genre';

/** One sampled quote: the values the mix draws its filters from. */
export type Sample = Pick<Quote, 'id' | 'author' | 'author_id' | 'work' | 'work_id' | 'category' | 'genre'>;

/** What the mix knows about the catalogue under test. */
export interface Vocabulary {
  /** Number of quotes in the catalogue (`pagination.total_quotes` of `GET /quotes`). */
  total: number;
  /** Largest id. */
  maxId: number;
  /** True when the ids are exactly 1..total, so any id in that range exists. */
  contiguousIds: boolean;
  /** Quotes sampled across the catalogue; never empty. */
  samples: Sample[];
}

/** The kinds of request in the mix. */
export const MIX_KINDS = ['default', 'filter', 'like', 'sort', 'deep', 'id', 'random', 'v1'] as const;
export type MixKind = (typeof MIX_KINDS)[number];

/**
 * Share of each kind, in percent (sums to 100). Listing and by-id reads dominate real traffic;
 * `_like` and multi-key sorts are the expensive queries, deep pages the worst case of paging.
 */
export const MIX_WEIGHTS: Readonly<Record<MixKind, number>> = {
  default: 15,
  filter: 20,
  like: 15,
  sort: 15,
  deep: 10,
  id: 15,
  random: 5,
  v1: 5,
};

/** The response shape a request of the mix expects with status 200. */
export type Expect = 'list' | 'quote' | 'v1';

/** One request of the mix: a path (with query string) relative to the base URL. */
export interface MixRequest {
  kind: MixKind;
  path: string;
  expect: Expect;
}

/** A source of uniform numbers in [0, 1): `Math.random` in k6, a seeded one in the benchmark. */
export type Random = () => number;

/** A small, fast, seeded PRNG (mulberry32), so a benchmark run is reproducible. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Sort keys the mix draws: every field but the texts, the language (not a sort key), and `id`,
 * which ends every sort anyway.
 */
const SORTABLE = QUOTE_FIELDS.filter((field) => !['id', 'source', 'quote', 'language'].includes(field));
const V1_ORDER = ['author', 'work', 'genre', 'publish_date', 'quote_length'];
const LIMITS = [5, 10, 20, 50, 100];
const FIELD_SETS = ['id,author,quote', 'author,work,genre', 'quote', 'id,publish_date,quote_length,source'];
/** Pages that "default" and "sort" requests stay within: the pages people actually open. */
const FIRST_PAGES = 10;

function pick<T>(items: readonly T[], random: Random): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('cannot pick from an empty list');
  return item;
}

function between(min: number, max: number, random: Random): number {
  return min + Math.floor(random() * (max - min + 1));
}

function q(name: string, value: string | number): string {
  return `${name}=${encodeURIComponent(String(value))}`;
}

function pages(total: number, limit: number): number {
  return Math.max(1, Math.ceil(total / limit));
}

/** Optional `fields=` in about a quarter of the requests (projections are common in real clients). */
function maybeFields(random: Random): string[] {
  return random() < 0.25 ? [q('fields', pick(FIELD_SETS, random))] : [];
}

function path(base: string, params: string[]): string {
  return params.length === 0 ? base : `${base}?${params.join('&')}`;
}

// Separators of name words, written so that k6's regexp engine (Go based) reads them as V8 does:
// white space, ASCII punctuation and common typographic punctuation. The contract's words are
// runs of letters and digits; any prefix of a chunk that starts at one of these boundaries is
// made of whole words of the name followed by the beginning of one, so it always matches.
const SEPARATORS = /[\s\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e\u00b7\u2010-\u2015\u2018-\u201f]+/;

/** True when the text holds a cased letter or a digit, i.e. at least one word for the service. */
function hasWord(text: string): boolean {
  for (const ch of text) {
    if ((ch >= '0' && ch <= '9') || ch.toLowerCase() !== ch.toUpperCase()) return true;
  }
  return false;
}

/**
 * A word-prefix query for `_like` that matches `text`: the beginning (3 to 5 code points) of one
 * of its words, or of two of them in reverse order ("word order does not matter").
 * Null when the text has no usable word.
 */
export function likeValue(text: string, random: Random): string | null {
  const chunks = text.split(SEPARATORS).filter(hasWord);
  if (chunks.length === 0) return null;
  const prefix = (chunk: string) =>
    Array.from(chunk)
      .slice(0, between(3, 5, random))
      .join('');
  const first = prefix(pick(chunks, random));
  if (!hasWord(first)) return null;
  if (chunks.length > 1 && random() < 0.3) {
    const other = prefix(pick(chunks, random));
    if (hasWord(other)) return `${other} ${first}`;
  }
  return first;
}

function sample(vocab: Vocabulary, random: Random): Sample {
  return pick(vocab.samples, random);
}

/** A page size, and one of the first pages at that size. */
function limitAndFirstPage(vocab: Vocabulary, random: Random): string[] {
  const limit = pick(LIMITS, random);
  return [q('limit', limit), q('page', between(1, Math.min(FIRST_PAGES, pages(vocab.total, limit)), random))];
}

function defaultList(vocab: Vocabulary, random: Random): MixRequest {
  const params: string[] = [];
  const roll = random();
  if (roll < 0.3) {
    // The bare default request, as most clients send it.
  } else if (roll < 0.6) {
    params.push(q('page', between(1, Math.min(FIRST_PAGES, pages(vocab.total, 5)), random)));
  } else {
    params.push(...limitAndFirstPage(vocab, random));
  }
  return { kind: 'default', path: path('/quotes', [...params, ...maybeFields(random)]), expect: 'list' };
}

function filtered(vocab: Vocabulary, random: Random): MixRequest {
  const s = sample(vocab, random);
  const genre = pick(s.genre, random);
  const other = sample(vocab, random);
  const forms: (() => string[])[] = [
    () => [q('author', s.author)],
    () => [q('author_id', s.author_id)],
    () => [q('work_id', s.work_id)],
    () => [q('work', s.work)],
    () => [q('genre', genre)],
    () => [q('category', s.category), q('genre', genre)],
    () => [q('author_id', s.author_id), q('genre', genre)],
    // Repeating a filter means "any of": both authors' quotes.
    () => [q('author_id', s.author_id), q('author_id', other.author_id)],
    () => [q('genre', genre), q('genre', pick(other.genre, random)), q('sort', 'publish_date')],
  ];
  const params = pick(forms, random)();
  if (random() < 0.3) params.push(q('limit', pick(LIMITS, random)));
  return { kind: 'filter', path: path('/quotes', [...params, ...maybeFields(random)]), expect: 'list' };
}

function like(vocab: Vocabulary, random: Random): MixRequest {
  const s = sample(vocab, random);
  const onWork = random() < 0.4;
  const value = likeValue(onWork ? s.work : s.author, random);
  // A name without a usable word (rare) still yields a valid request of the same cost class.
  if (value === null) return filtered(vocab, random);
  const params = [q(onWork ? 'work_like' : 'author_like', value)];
  if (random() < 0.3) params.push(q('sort', pick(SORTABLE, random)));
  return { kind: 'like', path: path('/quotes', [...params, ...maybeFields(random)]), expect: 'list' };
}

function sorted(vocab: Vocabulary, random: Random): MixRequest {
  const keys: string[] = [];
  const count = between(2, 3, random);
  while (keys.length < count) {
    const key = pick(SORTABLE, random);
    if (!keys.includes(key)) keys.push(key);
  }
  const orders = keys.map(() => (random() < 0.5 ? 'asc' : 'desc'));
  const params: string[] = [];
  const form = random();
  if (form < 0.4) {
    params.push(q('sort', keys.join(',')), q('order', orders.join(',')));
  } else if (form < 0.7) {
    for (const key of keys) params.push(q('sort', key));
    params.push(q('order', orders[0] ?? 'asc'));
  } else {
    for (const key of keys) params.push(q('sort', key));
    for (const order of orders) params.push(q('order', order));
  }
  params.push(...limitAndFirstPage(vocab, random));
  return { kind: 'sort', path: path('/quotes', [...params, ...maybeFields(random)]), expect: 'list' };
}

function deep(vocab: Vocabulary, random: Random): MixRequest {
  const limit = pick(LIMITS, random);
  // Any page of the whole catalogue, the last one included.
  const params = [q('page', between(1, pages(vocab.total, limit), random)), q('limit', limit)];
  if (random() < 0.2) params.push(q('order', 'desc'));
  return { kind: 'deep', path: path('/quotes', params), expect: 'list' };
}

function byId(vocab: Vocabulary, random: Random): MixRequest {
  const id = vocab.contiguousIds ? between(1, vocab.total, random) : sample(vocab, random).id;
  return { kind: 'id', path: path(`/quotes/${id}`, maybeFields(random)), expect: 'quote' };
}

function randomQuote(vocab: Vocabulary, random: Random): MixRequest {
  const s = sample(vocab, random);
  const forms: (() => string[])[] = [
    () => [],
    () => [q('genre', pick(s.genre, random))],
    () => [q('author_id', s.author_id)],
    () => [q('category', s.category), q('fields', 'quote,author')],
  ];
  return { kind: 'random', path: path('/quotes/random', pick(forms, random)()), expect: 'quote' };
}

function v1(vocab: Vocabulary, random: Random): MixRequest {
  const s = sample(vocab, random);
  const params = [q('genre', pick(s.genre, random))];
  if (random() < 0.5) params.push(q('orderby', pick(V1_ORDER, random)));
  if (random() < 0.3) params.push(q('sort', 'desc'));
  if (random() < 0.3) params.push(q('limit', pick(LIMITS, random)));
  return { kind: 'v1', path: path('/api/v1/quotes', params), expect: 'v1' };
}

const BUILDERS: Record<MixKind, (vocab: Vocabulary, random: Random) => MixRequest> = {
  default: defaultList,
  filter: filtered,
  like,
  sort: sorted,
  deep,
  id: byId,
  random: randomQuote,
  v1,
};

/** Draws a kind according to {@link MIX_WEIGHTS}. */
export function pickKind(random: Random): MixKind {
  let roll = random() * 100;
  for (const kind of MIX_KINDS) {
    roll -= MIX_WEIGHTS[kind];
    if (roll < 0) return kind;
  }
  return 'default';
}

/** One request of the given kind (or of a kind drawn by weight). Every one of them answers 200. */
export function nextRequest(vocab: Vocabulary, random: Random, kind: MixKind = pickKind(random)): MixRequest {
  if (vocab.samples.length === 0) throw new Error('the vocabulary holds no sampled quote');
  return BUILDERS[kind](vocab, random);
}

/**
 * Up to `count` requests with pairwise distinct paths, drawn by weight (or all of one `kind`),
 * for runs that must never hit a cache. Stops early when the catalogue cannot yield more
 * distinct paths (a tiny one).
 */
export function distinctRequests(
  vocab: Vocabulary,
  random: Random,
  count: number,
  kind?: MixKind,
): MixRequest[] {
  const seen = new Set<string>();
  const out: MixRequest[] = [];
  let misses = 0;
  // Repeats become likely once the small kinds are exhausted; give up after a long dry run.
  while (out.length < count && misses < count * 5 + 1000) {
    const request = nextRequest(vocab, random, kind ?? pickKind(random));
    if (seen.has(request.path)) {
      misses++;
      continue;
    }
    seen.add(request.path);
    out.push(request);
  }
  return out;
}

/**
 * Pages (of `limit` items) to sample a vocabulary from: the first, the last, and `count - 2`
 * spread at random in between, without repeats.
 */
export function samplePages(total: number, limit: number, count: number, random: Random): number[] {
  const last = pages(total, limit);
  const chosen = new Set<number>([1, last]);
  let attempts = 0;
  while (chosen.size < Math.min(count, last) && attempts++ < count * 20) {
    chosen.add(between(1, last, random));
  }
  return [...chosen].sort((a, b) => a - b);
}

function isSample(value: unknown): value is Sample {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.id === 'number' &&
    typeof v.author === 'string' &&
    typeof v.author_id === 'number' &&
    typeof v.work === 'string' &&
    typeof v.work_id === 'number' &&
    typeof v.category === 'string' &&
    Array.isArray(v.genre) &&
    v.genre.length > 0 &&
    v.genre.every((g) => typeof g === 'string')
  );
}

/**
 * Builds the vocabulary from `GET /quotes` answers: `total` and `maxId` from a request sorted by
 * id descending, and the items of the sampled pages. Throws when nothing usable was sampled.
 */
export function vocabularyFrom(total: number, maxId: number, items: readonly unknown[]): Vocabulary {
  const samples = items.filter(isSample);
  if (samples.length === 0 || total < 1) {
    throw new Error('no quote could be sampled from the service: is the catalogue empty?');
  }
  // Unique positive ids with max === count are exactly 1..count.
  return { total, maxId, contiguousIds: maxId === total, samples };
}
