/**
 * Text sorts of values that agree on hundreds of bytes (test-support/long-labels.ts), over HTTP,
 * run on every engine (long-sort.test.ts: SQLite; long-sort-meilisearch.test.ts: a real
 * Meilisearch): `/quotes` sorted by author, work, category and genre, alone and combined, every
 * page including those read from the far end; `/api/v1/quotes` by `orderby`; `/authors` and
 * `/works` by name. Expectations come from the contract's rule, written here: the folded form
 * compared by code point (as UTF-8 bytes), then id ascending.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fold, type Quote } from './catalogue/port.ts';
import { type EngineBackend, engineApp } from './test-support/engine-apps.ts';
import { longLabelQuotes } from './test-support/long-labels.ts';

const BYPASS = { 'x-bypass-auth': 'true' };

/**
 * Past the 1,000 matches a page is read forward from at once: the last pages are counted first
 * and read from the far end (past the middle, past 80%).
 */
const QUOTES = longLabelQuotes(1_300);

type TextField = 'author' | 'work' | 'category' | 'genre';

const textOf = (q: Quote, field: TextField) => fold(field === 'genre' ? (q.genre[0] as string) : q[field]);

const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** `sort` and `order` of keys like `author` or `-work`. */
function sortParams(keys: readonly string[]): string {
  const fields = keys.map((k) => k.replace(/^-/, ''));
  const orders = keys.map((k) => (k.startsWith('-') ? 'desc' : 'asc'));
  return `sort=${fields.join(',')}&order=${orders.join(',')}`;
}

/** The contract's order of `quotes` for sort keys like `author` or `-work`. */
function expectedOrder(quotes: readonly Quote[], keys: readonly string[]): number[] {
  return [...quotes]
    .sort((x, y) => {
      for (const key of keys) {
        const desc = key.startsWith('-');
        const field = (desc ? key.slice(1) : key) as TextField | 'quote_length';
        const order =
          field === 'quote_length'
            ? x.quote_length - y.quote_length
            : byCodePoint(textOf(x, field), textOf(y, field));
        if (order !== 0) return desc ? -order : order;
      }
      return x.id - y.id;
    })
    .map((q) => q.id);
}

/** Authors (works) of `quotes` by folded name (title), then id: each id has one spelling here. */
function expectedDirectory(
  quotes: readonly Quote[],
  kind: 'authors' | 'works',
  direction: 'asc' | 'desc',
): number[] {
  const names = new Map<number, string>();
  for (const q of quotes) {
    names.set(kind === 'authors' ? q.author_id : q.work_id, fold(kind === 'authors' ? q.author : q.work));
  }
  const sign = direction === 'asc' ? 1 : -1;
  return [...names].sort(([xId, x], [yId, y]) => sign * byCodePoint(x, y) || xId - yId).map(([id]) => id);
}

export function describeLongSorts(backend: EngineBackend): void {
  const title = `sorts of long text values on ${backend.name}`;
  if (backend.skip !== undefined) {
    describe.skip(`${title} (skipped: ${backend.skip})`, () => {
      it('needs the engine', () => {});
    });
    return;
  }
  describe(title, () => {
    let app: FastifyInstance | undefined;
    let remove: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      await backend.start();
      const served = await backend.serve(QUOTES);
      remove = served.remove;
      app = await engineApp(served.env);
    }, 180_000);

    afterAll(async () => {
      await app?.close();
      await remove?.();
      await backend.stop();
    });

    async function ids(url: string, read: (body: unknown) => { ids: number[]; pages: number }) {
      const out: number[] = [];
      for (let page = 1; ; page++) {
        const response = await (app as FastifyInstance).inject({
          method: 'GET',
          url: `${url}&page=${page}`,
          headers: BYPASS,
        });
        expect(response.statusCode, `${url} page ${page}: ${response.body}`).toBe(200);
        const { ids: found, pages } = read(response.json());
        out.push(...found);
        if (page >= pages) return out;
      }
    }

    const quotePages = (url: string) =>
      ids(url, (body) => {
        const { items, pagination } = body as {
          items: { id: number }[];
          pagination: { total_pages: number };
        };
        return { ids: items.map((i) => i.id), pages: pagination.total_pages };
      });

    const SORTS = [
      ['author'],
      ['-author'],
      ['work'],
      ['-work'],
      ['category'],
      ['-category'],
      ['genre'],
      ['-genre'],
      ['category', '-author'],
      ['-genre', 'work'],
      ['quote_length', 'author'],
      ['-quote_length', '-category'],
    ];

    for (const keys of SORTS) {
      it(`/quotes?${sortParams(keys)}: every page in the contract's order`, async () => {
        const got = await quotePages(`/quotes?${sortParams(keys)}&limit=100&fields=id`);
        expect(got).toEqual(expectedOrder(QUOTES, keys));
      });
    }

    it('/quotes filtered by a value, sorted by the others: the same order among the matches', async () => {
      const matches = QUOTES.filter((q) => fold(q.category) === fold('Plain Author'));
      expect(matches.length).toBeGreaterThan(10);
      const got = await quotePages(
        `/quotes?category=plain+author&${sortParams(['-work', 'genre'])}&limit=7&fields=id`,
      );
      expect(got).toEqual(expectedOrder(matches, ['-work', 'genre']));
    });

    for (const orderby of ['author', 'work', 'genre'] as const) {
      for (const direction of ['asc', 'desc'] as const) {
        it(`/api/v1/quotes?orderby=${orderby}&sort=${direction}: every page in the contract's order`, async () => {
          const matches = QUOTES.filter((q) => q.genre.some((g) => fold(g) === fold('Plain Author')));
          expect(matches.length).toBeGreaterThan(10);
          const got = await ids(
            `/api/v1/quotes?genre=Plain+Author&orderby=${orderby}&sort=${direction}&limit=9`,
            (body) => {
              const { data, pagination } = body as {
                data: { id: number }[];
                pagination: { total_pages: number };
              };
              return { ids: data.map((i) => i.id), pages: pagination.total_pages };
            },
          );
          expect(got).toEqual(expectedOrder(matches, [direction === 'asc' ? orderby : `-${orderby}`]));
        });
      }
    }

    for (const kind of ['authors', 'works'] as const) {
      const name = kind === 'authors' ? 'name' : 'title';
      for (const direction of ['asc', 'desc'] as const) {
        it(`/${kind}?sort=${name}&order=${direction}: by folded ${name}, then id`, async () => {
          const got = await ids(`/${kind}?sort=${name}&order=${direction}&limit=6&fields=id`, (body) => {
            const { items, pagination } = body as {
              items: { id: number }[];
              pagination: { total_pages: number };
            };
            return { ids: items.map((i) => i.id), pages: pagination.total_pages };
          });
          expect(got).toEqual(expectedDirectory(QUOTES, kind, direction));
        });

        it(`/${kind}?category=…&sort=${name}&order=${direction}: the same order among the counted`, async () => {
          const matches = QUOTES.filter((q) => fold(q.category) === fold('Plain Author'));
          const got = await ids(
            `/${kind}?category=plain+author&sort=${name}&order=${direction}&limit=6&fields=id`,
            (body) => {
              const { items, pagination } = body as {
                items: { id: number }[];
                pagination: { total_pages: number };
              };
              return { ids: items.map((i) => i.id), pages: pagination.total_pages };
            },
          );
          expect(got).toEqual(expectedDirectory(matches, kind, direction));
        });
      }
    }
  });
}
