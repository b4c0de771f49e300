/**
 * The behaviour suite of full-text search (`q`), run unchanged on every backend (search.test.ts:
 * SQLite; meilisearch/search.test.ts: a real Meilisearch). Expectations come from a model
 * written here from the contract's text (folding, words, the matching rule of `q` and its
 * relevance groups), independent of the service's own `fold`, `words` and matchers, over the
 * bundled catalogue, a generated one with accents, apostrophes, hyphens and CJK text, and a
 * small catalogue written for the relevance rule.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateQuotes } from '../../indexer/generate.ts';
import { SKIP_TAG } from '../test-support/suites.ts';
import type { CatalogueHarness } from './port.suite.ts';
import type { CatalogueIndex, Filters, ListQuery, Quote, SortKey } from './port.ts';

// ---------------------------------------------------------------------------------------------
// The model, from the contract's words: NFKD, marks removed, lower case; words are the maximal
// runs of letters and digits.

const modelWords = (text: string): string[] =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

interface ModelQuote {
  quote: Quote;
  text: string[];
  all: Set<string>;
  allList: string[];
}

const modelOf = (quote: Quote): ModelQuote => {
  const text = modelWords(quote.quote);
  const allList = [...text, ...modelWords(quote.author), ...modelWords(quote.work)];
  return { quote, text, all: new Set(allList), allList };
};

/** Every word but the last is a word of the list; the last begins one. */
const holds = (list: readonly string[], set: ReadonlySet<string>, q: readonly string[]) =>
  q.slice(0, -1).every((w) => set.has(w)) && list.some((w) => w.startsWith(q.at(-1) as string));

const matchesQ = (m: ModelQuote, q: readonly string[]) => holds(m.allList, m.all, q);
const inText = (m: ModelQuote, q: readonly string[]) => holds(m.text, new Set(m.text), q);
const phraseInText = (m: ModelQuote, q: readonly string[]) => {
  for (let i = 0; i + q.length <= m.text.length; i++) {
    let ok = true;
    for (let k = 0; k < q.length && ok; k++) {
      const word = m.text[i + k] as string;
      ok = k === q.length - 1 ? word.startsWith(q[k] as string) : word === q[k];
    }
    if (ok) return true;
  }
  return false;
};

const byId = (a: Quote, b: Quote) => a.id - b.id;
/** quote_length descending, then author's folded form by code point, then id. */
const byLengthThenAuthor = (a: Quote, b: Quote) => {
  if (a.quote_length !== b.quote_length) return b.quote_length - a.quote_length;
  const x = [...modelWords(a.author).join(' ')].map((c) => c.codePointAt(0) as number);
  const y = [...modelWords(b.author).join(' ')].map((c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++)
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length !== y.length ? x.length - y.length : a.id - b.id;
};

// ---------------------------------------------------------------------------------------------
// Catalogues.

const codePoints = (text: string) => [...text].length;
const withLength = (q: Omit<Quote, 'quote_length'>): Quote => ({ ...q, quote_length: codePoints(q.quote) });

/** The bundled catalogue, as the indexer reads it. */
export function bundledQuotes(): Quote[] {
  const raw = JSON.parse(readFileSync(new URL('../../data/quotes.json', import.meta.url), 'utf8')) as Array<
    Omit<Quote, 'quote_length' | 'genre'> & { genre: string | string[] }
  >;
  return raw.map((r) => withLength({ ...r, genre: Array.isArray(r.genre) ? r.genre : [r.genre] }));
}

/** Texts the generated catalogue lacks: CJK runs, letters without decomposition, compatibility forms. */
const EXTRA_TEXTS = [
  '我思故我在，故我在思。',
  '東京の夜は長い — 夜明け前',
  'Søren Kierkegaard’s øre: ﬁne Straße, ÆSIR and Ærø',
  'Ｆｕｌｌｗｉｄｔｈ ＬＥＴＴＥＲＳ and ① circled',
  'L’été d’Émile — « jusqu’au‑boutiste » et porte‑à‑faux',
  'rock-and-roll is rock and roll, said O’Neil',
  'Jean-Paul wrote: l’enfer, c’est les autres.',
  '일기 일회 — 한국어 문장',
];

/** The generated catalogue, with CJK and other hard texts mixed into some quotes. */
export function generatedQuotes(count: number): Quote[] {
  return [...generateQuotes(count, 11)].map((q, i) =>
    withLength(
      i % 17 === 3
        ? { ...q, quote: `${q.quote} ${EXTRA_TEXTS[Math.floor(i / 17) % EXTRA_TEXTS.length]}` }
        : q,
    ),
  );
}

/** A catalogue written for the relevance groups: each quote's group is known by construction. */
export function relevanceQuotes(): Quote[] {
  const base = {
    author: 'Anne Other',
    author_id: 1,
    work: 'Plain Book',
    work_id: 1,
    category: 'fiction',
    genre: ['novel'],
    publish_date: '1900',
    source: 'https://example.org/1',
    language: 'en',
  };
  const texts: Array<[number, string]> = [
    [1, 'Nothing here matches at all.'],
    [2, 'The garden was quiet, and the light fell slowly.'],
    [3, 'Slowly the light came back; quiet was the garden.'],
    [4, 'A quiet garden, where light fell.'],
    [5, 'In the quiet garden light fell slowly over the stones.'],
    [6, 'Garden talk: she was quiet for hours.'],
  ];
  const quotes = texts.map(([id, quote]) => withLength({ ...base, id, quote }));
  // Matches "quiet garden" only through its author and work.
  quotes.push(
    withLength({
      ...base,
      id: 7,
      author: 'Quiet Writer',
      author_id: 2,
      work: 'The Garden Papers',
      work_id: 2,
      quote: 'Words about something else entirely.',
    }),
  );
  return quotes;
}

// ---------------------------------------------------------------------------------------------
// Queries drawn from a catalogue, deterministic.

function queriesFor(quotes: readonly Quote[]): string[] {
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const out = new Set<string>();
  for (let i = 0; i < 24; i++) {
    const quote = quotes[next(quotes.length)] as Quote;
    const own = quote.quote.split(/\s+/).filter((w) => w !== '');
    const at = next(Math.max(1, own.length - 2));
    const phrase = own.slice(at, at + 1 + next(3)).join(' ');
    out.add(phrase);
    // As typed: the last word cut short, upper case.
    if (phrase.length > 3) out.add(phrase.slice(0, -2).toUpperCase());
  }
  for (const quote of quotes.slice(0, 6)) out.add(`${quote.author.split(' ')[0]} ${quote.work.slice(0, 3)}`);
  for (const q of [
    'the',
    't',
    'love',
    'me',
    'emile',
    'ÉMILE',
    'ete',
    'jusqu',
    "O'Neil",
    'o neil',
    'rock-and-roll',
    'rock and',
    '我思故我在',
    '我思',
    '東京の夜は長い',
    'søren',
    'soren',
    'strasse',
    'straße',
    'fine',
    'full',
    'fullwidth letters',
    '1',
    'æsir',
    'aesir',
    '일기',
    'c est',
    'les autres l',
    'zzzzzz',
  ]) {
    out.add(q);
  }
  return [...out].filter((q) => {
    const w = modelWords(q);
    return w.length > 0 && w.length <= 10 && w.every((x) => codePoints(x) <= 64);
  });
}

// ---------------------------------------------------------------------------------------------
// The suite.

const query = (q: string[], extra: Partial<ListQuery> = {}, filters: Filters = {}): ListQuery => ({
  filters: { ...filters, q },
  sort: [],
  page: 1,
  limit: 100,
  fields: ['id'],
  ...extra,
});

async function allIds(index: CatalogueIndex, base: ListQuery): Promise<{ ids: number[]; totals: number[] }> {
  const ids: number[] = [];
  const totals: number[] = [];
  for (let page = 1; ; page++) {
    const result = await index.list({ ...base, page });
    totals.push(result.total);
    ids.push(...result.items.map((item) => item.id as number));
    if (result.items.length < base.limit) break;
  }
  return { ids, totals };
}

/**
 * Registers the suite for one backend; with `options.skip` it is registered skipped, loudly.
 * `options.phraseFirst`: the backend puts every quote holding the words side by side first
 * (search.ts: exact on the embedded engine; Meilisearch ranks by its own proximity measure).
 */
export function describeSearch(
  backend: string,
  harness: () => Promise<CatalogueHarness> | CatalogueHarness,
  options: { skip?: string; phraseFirst?: boolean } = {},
  /** Tests of this backend alone, registered inside the suite (after its harness is up). */
  more?: (test: typeof it) => void,
): void {
  if (options.skip !== undefined) {
    console.warn(`${SKIP_TAG} full-text search on ${backend}: ${options.skip}`);
    describe.skip(`full-text search: ${backend} (skipped: ${options.skip})`, () => {
      it('needs the backend', () => {});
    });
    return;
  }

  describe(`full-text search: ${backend}`, () => {
    let current: CatalogueHarness | undefined;
    beforeAll(async () => {
      current = await harness();
    }, 120_000);
    afterAll(async () => {
      await current?.teardown();
    }, 60_000);

    const differential = (name: string, quotes: () => Quote[]) => {
      describe(`on the ${name} catalogue`, () => {
        let index: CatalogueIndex;
        let model: ModelQuote[];
        let queries: string[];
        beforeAll(async () => {
          const all = quotes();
          model = all.map(modelOf);
          queries = queriesFor(all);
          index = await (current as CatalogueHarness).load(all);
        }, 300_000);

        it('matches exactly the quotes of the model, with the exact total, in the order asked for', async () => {
          let nonEmpty = 0;
          for (const text of queries) {
            const q = modelWords(text);
            const expected = model.filter((m) => matchesQ(m, q)).map((m) => m.quote);
            if (expected.length > 0) nonEmpty++;
            const sorts: Array<[SortKey[], (a: Quote, b: Quote) => number]> = [
              [[], byId],
              [
                [
                  { field: 'quote_length', direction: 'desc' },
                  { field: 'author', direction: 'asc' },
                ],
                byLengthThenAuthor,
              ],
            ];
            for (const [sort, compare] of sorts) {
              const { ids, totals } = await allIds(index, query(q, { sort }));
              expect({ q: text, ids }).toEqual({
                q: text,
                ids: [...expected].sort(compare).map((x) => x.id),
              });
              expect(new Set(totals)).toEqual(new Set([expected.length]));
            }
          }
          // The queries are not all misses: most find something, some find nothing.
          expect(nonEmpty).toBeGreaterThan(queries.length / 2);
          expect(nonEmpty).toBeLessThan(queries.length);
        }, 300_000);

        it('ranks every match whose text holds all the words before those matched through author or work', async () => {
          for (const text of queries) {
            const q = modelWords(text);
            const matching = model.filter((m) => matchesQ(m, q));
            const { ids, totals } = await allIds(index, query(q, { ranked: true, limit: 23 }));
            expect(new Set(totals)).toEqual(new Set([matching.length]));
            // Every match once, whatever the order.
            expect({ q: text, ids: [...ids].sort((a, b) => a - b) }).toEqual({
              q: text,
              ids: matching.map((m) => m.quote.id).sort((a, b) => a - b),
            });
            const textGroup = new Set(matching.filter((m) => inText(m, q)).map((m) => m.quote.id));
            expect({ q: text, first: new Set(ids.slice(0, textGroup.size)) }).toEqual({
              q: text,
              first: textGroup,
            });
            if (options.phraseFirst === true) {
              const phrase = new Set(matching.filter((m) => phraseInText(m, q)).map((m) => m.quote.id));
              expect({ q: text, first: new Set(ids.slice(0, phrase.size)) }).toEqual({
                q: text,
                first: phrase,
              });
            }
          }
        }, 300_000);

        it('combines with the other filters (AND)', async () => {
          const first = model[0]?.quote as Quote;
          const author = modelWords(first.author).join(' ');
          const q = ['the'];
          const expected = model
            .filter((m) => matchesQ(m, q) && modelWords(m.quote.author).join(' ') === author)
            .map((m) => m.quote.id);
          const { ids } = await allIds(index, query(q, {}, { author: [author] }));
          expect(ids).toEqual(expected);
          const ranked = await allIds(index, query(q, { ranked: true }, { author: [author] }));
          expect([...ranked.ids].sort((a, b) => a - b)).toEqual(expected);
        }, 60_000);
      });
    };

    more?.(it);
    differential('bundled', bundledQuotes);
    differential('generated', () => generatedQuotes(1_500));

    describe('relevance and random picks on a catalogue written for them', () => {
      let index: CatalogueIndex;
      beforeAll(async () => {
        index = await (current as CatalogueHarness).load(relevanceQuotes());
      }, 120_000);

      it('puts the words side by side and in order first, then scattered ones, then author or work only', async () => {
        for (const q of [
          ['quiet', 'garden'],
          ['quiet', 'gard'],
        ]) {
          const { ids } = await allIds(index, query(q, { ranked: true }));
          // 4 and 5 hold "quiet garden"; 2, 3 and 6 hold both words apart; 7 only in author and work.
          expect(new Set(ids.slice(0, 2))).toEqual(new Set([4, 5]));
          expect(new Set(ids.slice(2, 5))).toEqual(new Set([2, 3, 6]));
          expect(ids.slice(5)).toEqual([7]);
        }
      });

      it('pages through the relevance order without overlap or gap', async () => {
        const whole = (await index.list(query(['quiet', 'garden'], { ranked: true, limit: 10 }))).items.map(
          (i) => i.id,
        );
        const pages: unknown[] = [];
        for (let page = 1; page <= 3; page++) {
          const result = await index.list(query(['quiet', 'garden'], { ranked: true, limit: 2, page }));
          expect(result.total).toBe(6);
          pages.push(...result.items.map((i) => i.id));
        }
        expect(pages).toEqual(whole);
        expect(
          (await index.list(query(['quiet', 'garden'], { ranked: true, limit: 2, page: 4 }))).items,
        ).toEqual([]);
      });

      it('draws a random match uniformly among the matches only', async () => {
        const seen = new Map<number, number>();
        const draws = 400;
        for (let i = 0; i < draws; i++) {
          const quote = await index.random({ q: ['quiet', 'garden'] }, ['id']);
          seen.set(quote?.id as number, (seen.get(quote?.id as number) ?? 0) + 1);
        }
        expect([...seen.keys()].sort()).toEqual([2, 3, 4, 5, 6, 7]);
        // Each of 6 matches expects 66.7 draws; below 30 or above 110 is far outside chance.
        for (const count of seen.values()) {
          expect(count).toBeGreaterThan(30);
          expect(count).toBeLessThan(110);
        }
        expect(await index.random({ q: ['nowhere'] }, ['id'])).toBeNull();
        expect(await index.random({ q: ['garden'], author_id: [2] }, ['id'])).toEqual({ id: 7 });
      }, 60_000);
    });
  });
}
