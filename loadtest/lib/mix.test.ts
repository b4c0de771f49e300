import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateQuotes } from '../../indexer/generate.ts';
import {
  codePointLength,
  FILTER_NAMES,
  matches,
  normaliseFilters,
  QUOTE_FIELDS,
  type Quote,
  type RawFilters,
  SORT_FIELDS,
} from '../../service/catalogue/port.ts';
import { FIXTURE_QUOTES } from '../../service/test-support/fixtures.ts';
import {
  distinctRequests,
  likeValue,
  MIX_KINDS,
  MIX_WEIGHTS,
  nextRequest,
  pickKind,
  samplePages,
  seededRandom,
  type Vocabulary,
  vocabularyFrom,
} from './mix.ts';

/**
 * The status the contract gives `path` on `catalogue`, computed with the port's reference
 * semantics (normaliseFilters, matches): 200, or the status and the reason it is not.
 */
function contractStatus(path: string, catalogue: readonly Quote[]): { status: number; why?: string } {
  const url = new URL(path, 'http://service.test');
  const params = url.searchParams;
  const bad = (why: string) => ({ status: 400, why });
  const only = (allowed: readonly string[]) => [...params.keys()].find((k) => !allowed.includes(k));
  const fieldsOk = () =>
    (params.get('fields') ?? 'id').split(',').every((f) => (QUOTE_FIELDS as readonly string[]).includes(f));
  const filtersOf = () => {
    const raw: RawFilters = {};
    for (const name of FILTER_NAMES) if (params.has(name)) raw[name] = params.getAll(name);
    return normaliseFilters(raw);
  };
  const byId = /^\/quotes\/([0-9]+)$/.exec(url.pathname);
  if (byId !== null) {
    if (only(['fields']) !== undefined || !fieldsOk()) return bad('parameters of /quotes/{id}');
    return catalogue.some((q) => q.id === Number(byId[1]))
      ? { status: 200 }
      : { status: 404, why: 'no such id' };
  }
  if (url.pathname === '/quotes/random') {
    if (only([...FILTER_NAMES, 'fields']) !== undefined || !fieldsOk())
      return bad('parameters of /quotes/random');
    const filters = filtersOf();
    return catalogue.some((q) => matches(q, filters))
      ? { status: 200 }
      : { status: 404, why: 'nothing matches' };
  }
  if (url.pathname === '/api/v1/quotes') {
    const unknown = only(['genre', 'page', 'limit', 'orderby', 'sort']);
    if (unknown !== undefined) return bad(`unknown v1 parameter ${unknown}`);
    if (
      !['author', 'work', 'genre', 'publish_date', 'quote_length'].includes(params.get('orderby') ?? 'author')
    ) {
      return bad('orderby');
    }
    if (!['asc', 'desc'].includes(params.get('sort') ?? 'asc')) return bad('v1 sort');
    const filters = normaliseFilters({ genre: params.getAll('genre') });
    const total = catalogue.filter((q) => matches(q, filters)).length;
    const limit = Number(params.get('limit') ?? 10);
    const page = Number(params.get('page') ?? 1);
    return total > 0 && page <= Math.ceil(total / limit) ? { status: 200 } : { status: 404, why: 'v1 page' };
  }
  if (url.pathname !== '/quotes') return { status: 404, why: 'unknown path' };
  const unknown = only([...FILTER_NAMES, 'sort', 'order', 'page', 'limit', 'fields']);
  if (unknown !== undefined) return bad(`unknown parameter ${unknown}`);
  if (!fieldsOk()) return bad('fields');
  const sort = params.getAll('sort').flatMap((s) => s.split(','));
  if (!sort.every((s) => (SORT_FIELDS as readonly string[]).includes(s))) return bad('sort');
  const order = params.getAll('order').flatMap((s) => s.split(','));
  if (!order.every((o) => o === 'asc' || o === 'desc')) return bad('order');
  if (order.length > 1 && order.length !== sort.length) return bad('one order per sort key');
  if (params.getAll('page').length > 1 || params.getAll('limit').length > 1)
    return bad('repeated page/limit');
  const limit = Number(params.get('limit') ?? 5);
  const page = Number(params.get('page') ?? 1);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !Number.isInteger(page) || page < 1) {
    return bad('page/limit');
  }
  const filters = filtersOf();
  const total = catalogue.filter((q) => matches(q, filters)).length;
  if (total === 0) return { status: 404, why: 'nothing matches' };
  return page <= Math.ceil(total / limit) ? { status: 200 } : { status: 404, why: 'page past the last' };
}

/** A vocabulary sampled from `catalogue` the way the scripts sample a service (pages of 100). */
function sampled(catalogue: readonly Quote[], pages: number, seed: number): Vocabulary {
  const byId = [...catalogue].sort((a, b) => a.id - b.id);
  const items = samplePages(byId.length, 100, pages, seededRandom(seed)).flatMap((p) =>
    byId.slice((p - 1) * 100, p * 100),
  );
  return vocabularyFrom(byId.length, byId.at(-1)?.id ?? 0, items);
}

function generated(count: number): Quote[] {
  return [...generateQuotes(count, 7)].map((q) => ({ ...q, quote_length: codePointLength(q.quote) }));
}

function bundled(): Quote[] {
  const raw = JSON.parse(readFileSync(new URL('../../data/quotes.json', import.meta.url), 'utf8')) as (Omit<
    Quote,
    'genre' | 'quote_length'
  > & { genre: string | string[] })[];
  return raw.map((q) => ({
    ...q,
    genre: Array.isArray(q.genre) ? q.genre : [q.genre],
    quote_length: codePointLength(q.quote),
  }));
}

const CATALOGUES: [string, () => Quote[]][] = [
  ['a generated catalogue (ids 1..N)', () => generated(2000)],
  ['the hand-made fixtures (accents, gaps in ids)', () => FIXTURE_QUOTES],
  ['the bundled data set', bundled],
];

describe('the request mix', () => {
  it.each(CATALOGUES)('answers 200 for every request it draws on %s', (_name, load) => {
    const catalogue = load();
    const vocab = sampled(catalogue, 5, 3);
    const random = seededRandom(11);
    const failures: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const request = nextRequest(vocab, random);
      const result = contractStatus(request.path, catalogue);
      if (result.status !== 200) failures.push(`${request.path}: ${result.status} ${result.why}`);
    }
    expect(failures).toEqual([]);
  });

  it('draws every kind, in proportion to its weight', () => {
    const random = seededRandom(5);
    const n = 20_000;
    const tally = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const kind = pickKind(random);
      tally.set(kind, (tally.get(kind) ?? 0) + 1);
    }
    expect(Object.values(MIX_WEIGHTS).reduce((a, b) => a + b, 0)).toBe(100);
    for (const kind of MIX_KINDS) {
      expect(Math.abs((tally.get(kind) ?? 0) / n - MIX_WEIGHTS[kind] / 100)).toBeLessThan(0.015);
    }
  });

  it('gives each kind the shape its path asks for', () => {
    const vocab = sampled(generated(2000), 3, 1);
    const random = seededRandom(2);
    for (const kind of MIX_KINDS) {
      const request = nextRequest(vocab, random, kind);
      expect(request.kind).toBe(kind);
      const expected = kind === 'id' || kind === 'random' ? 'quote' : kind === 'v1' ? 'v1' : 'list';
      expect(request.expect).toBe(expected);
    }
  });

  it('is reproducible from a seed', () => {
    const vocab = sampled(generated(2000), 3, 1);
    const draw = () => distinctRequests(vocab, seededRandom(42), 50).map((r) => r.path);
    expect(draw()).toEqual(draw());
  });

  it('draws pairwise distinct paths, and stops when a tiny catalogue has no more', () => {
    const vocab = sampled(generated(5000), 5, 1);
    const paths = distinctRequests(vocab, seededRandom(1), 5000).map((r) => r.path);
    expect(paths).toHaveLength(5000);
    expect(new Set(paths).size).toBe(5000);
    const deep = distinctRequests(sampled(generated(12), 1, 1), seededRandom(1), 10_000, 'deep');
    // 12 quotes: 3 + 2 + 1 + 1 + 1 pages for limits 5/10/20/50/100, each with or without order=desc.
    expect(deep.length).toBeGreaterThan(0);
    expect(deep.length).toBeLessThanOrEqual(16);
    expect(new Set(deep.map((r) => r.path)).size).toBe(deep.length);
  });

  it('uses any id of a catalogue with ids 1..N, and only sampled ids when ids have gaps', () => {
    const dense = sampled(generated(3000), 1, 1);
    expect(dense.contiguousIds).toBe(true);
    const drawn = seededRandom(8);
    const ids = new Set(
      Array.from({ length: 500 }, () => nextRequest(dense, drawn, 'id').path.split('?')[0]),
    );
    // The sample holds 100 quotes; 500 draws over 3000 ids give far more distinct ones.
    expect(ids.size).toBeGreaterThan(400);
    const gappy = sampled(FIXTURE_QUOTES, 1, 1);
    expect(gappy.contiguousIds).toBe(false);
    const known = new Set(gappy.samples.map((s) => `/quotes/${s.id}`));
    const random = seededRandom(3);
    for (let i = 0; i < 200; i++)
      expect(known.has(nextRequest(gappy, random, 'id').path.split('?')[0] ?? '')).toBe(true);
  });
});

describe('likeValue', () => {
  const names = [
    'Jean-Paul Sartre',
    "Flannery O'Connor",
    'Paul E\u0301luard',
    'e. e. cummings',
    'Søren Kierkegaard',
    'Brontë',
  ];
  it.each(names)('always yields word prefixes that match %s by the contract', (name) => {
    const random = seededRandom(9);
    const quote = { ...FIXTURE_QUOTES[0], author: name } as Quote;
    for (let i = 0; i < 100; i++) {
      const value = likeValue(name, random);
      expect(value).not.toBeNull();
      expect(matches(quote, normaliseFilters({ author_like: [value as string] }))).toBe(true);
    }
  });

  it('gives up on a text without any word', () => {
    expect(likeValue(' -- ... ', seededRandom(1))).toBeNull();
  });
});

describe('samplePages', () => {
  it('always includes the first and last page and never repeats one', () => {
    const pages = samplePages(1_000_000, 100, 20, seededRandom(4));
    expect(pages[0]).toBe(1);
    expect(pages.at(-1)).toBe(10_000);
    expect(new Set(pages).size).toBe(pages.length);
    expect(pages).toHaveLength(20);
    expect(samplePages(250, 100, 20, seededRandom(4))).toEqual([1, 2, 3]);
  });
});

describe('vocabularyFrom', () => {
  it('keeps only items with every sampled field, and refuses an empty sample', () => {
    const good = { id: 1, author: 'A', author_id: 1, work: 'W', work_id: 1, category: 'c', genre: ['g'] };
    const vocab = vocabularyFrom(10, 10, [good, { ...good, genre: [] }, { id: 2 }, null]);
    expect(vocab).toEqual({ total: 10, maxId: 10, contiguousIds: true, samples: [good] });
    expect(() => vocabularyFrom(10, 12, [{ id: 3 }])).toThrow(/no quote could be sampled/);
  });
});
