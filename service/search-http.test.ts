/**
 * `q` over HTTP, through the production app factory, on both engines at once: the bundled
 * catalogue built into SQLite and into a real Meilisearch (skipped loudly without one), and the
 * same requests asked of both. Pages with an order asked for must be identical byte for byte;
 * relevance pages must hold the same quotes with the same totals. The matching rule itself is
 * search.suite.ts; here: parameters, statuses, pagination, ETags, `/quotes/random`.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from './app.ts';
import { bundledQuotes } from './catalogue/search.suite.ts';
import { loadConfig } from './config.ts';
import { buildFixtureCatalogue, errorOf, type FixtureCatalogue, fixtureApp, get } from './test-app.ts';
import { buildMeiliCatalogue, type MeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'q over HTTP';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

interface Page {
  items: Array<{ id: number }>;
  pagination: { page: number; limit: number; total_pages: number; total_quotes: number };
}

describe.skipIf('skip' in source)('q over HTTP, the same answers from SQLite and Meilisearch', () => {
  let sqliteCatalogue: FixtureCatalogue;
  let engine: MeiliEngine | undefined;
  let meiliCatalogue: MeiliCatalogue | undefined;
  const apps: Record<'sqlite' | 'meilisearch', FastifyInstance> = {} as never;

  beforeAll(async () => {
    const quotes = bundledQuotes();
    sqliteCatalogue = await buildFixtureCatalogue(quotes);
    apps.sqlite = await fixtureApp(sqliteCatalogue.path);
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    meiliCatalogue = await buildMeiliCatalogue(engine, quotes);
    apps.meilisearch = await buildApp(
      loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000000', ...meiliCatalogue.env }),
    );
  }, 180_000);

  afterAll(async () => {
    for (const app of Object.values(apps)) await app?.close();
    sqliteCatalogue?.remove();
    await meiliCatalogue?.remove();
    await engine?.stop();
  }, 60_000);

  const both = async (url: string) => ({
    sqlite: await get(apps.sqlite, url),
    meilisearch: await get(apps.meilisearch, url),
  });

  it('answers a sorted search with the same bytes on both engines, page after page', async () => {
    for (const q of ['love', 'the+heart', 'emile', 'ZOLA', 'happy+famil', 'jane+heart']) {
      for (const sort of ['', '&sort=publish_date&order=desc', '&sort=author,quote_length']) {
        const url = `/quotes?q=${q}${sort === '' ? '&order=asc' : sort}&limit=3&fields=id,author,publish_date`;
        const first = await both(url);
        expect(first.sqlite.statusCode).toBe(200);
        expect(first.meilisearch.body).toBe(first.sqlite.body);
        const pages = (first.sqlite.json() as Page).pagination.total_pages;
        for (let page = 2; page <= Math.min(pages, 4); page++) {
          const next = await both(`${url}&page=${page}`);
          expect(next.meilisearch.body).toBe(next.sqlite.body);
        }
      }
    }
  });

  it('pages through the relevance order: every match once, the same totals', async () => {
    for (const q of ['love', 'the+heart', 'i+have']) {
      const seen: Record<string, number[]> = { sqlite: [], meilisearch: [] };
      const totals: Record<string, number> = {};
      for (const backend of ['sqlite', 'meilisearch'] as const) {
        for (let page = 1; ; page++) {
          const response = await get(apps[backend], `/quotes?q=${q}&limit=7&page=${page}&fields=id`);
          if (response.statusCode === 404) break;
          const body = response.json() as Page;
          totals[backend] = body.pagination.total_quotes;
          seen[backend]?.push(...body.items.map((i) => i.id));
        }
      }
      expect(totals.meilisearch).toBe(totals.sqlite);
      expect(seen.sqlite).toHaveLength(totals.sqlite as number);
      expect(new Set(seen.sqlite).size).toBe(totals.sqlite);
      expect([...(seen.meilisearch as number[])].sort((a, b) => a - b)).toEqual(
        [...(seen.sqlite as number[])].sort((a, b) => a - b),
      );
    }
  });

  it('finds the first quote with the documented example, alone and beside every filter', async () => {
    const url =
      '/quotes?q=truth+universally+ack&author=Jane+Austen&work_like=pride+prej&genre=romance&fields=id';
    const { sqlite, meilisearch } = await both(url);
    expect(sqlite.json()).toEqual({
      items: [{ id: 1 }],
      pagination: { page: 1, limit: 5, total_pages: 1, total_quotes: 1 },
    });
    expect(meilisearch.body).toBe(sqlite.body);
  });

  it('answers 404 for a search that finds nothing, and for a page past the last', async () => {
    for (const url of [
      '/quotes?q=zzzzqx',
      '/quotes?q=truth+universally+ack&page=2',
      '/quotes/random?q=zzzzqx',
    ]) {
      const { sqlite, meilisearch } = await both(url);
      expect(errorOf(sqlite).code).toBe(404);
      expect(meilisearch.body).toBe(sqlite.body);
    }
  });

  it('refuses a q without a word, with too many words or repeated, naming q', async () => {
    for (const url of [
      '/quotes?q=',
      '/quotes?q=+%21%3F',
      `/quotes?q=${'a+'.repeat(11)}`,
      '/quotes/random?q=a&q=b',
    ]) {
      const { sqlite, meilisearch } = await both(url);
      expect(errorOf(sqlite)).toMatchObject({
        code: 400,
        error: 'bad_request',
        details: expect.stringMatching(/^q /),
      });
      expect(meilisearch.body).toBe(sqlite.body);
    }
  });

  it('gives a new ETag when q changes, the same when only case or accents do', async () => {
    const tag = async (url: string) => (await get(apps.sqlite, url)).headers.etag;
    expect(await tag('/quotes?q=emile')).toBe(await tag('/quotes?q=%C3%89MILE'));
    expect(await tag('/quotes?q=emile')).not.toBe(await tag('/quotes?q=zola'));
    expect(await tag('/quotes?q=emile')).not.toBe(await tag('/quotes'));
  });

  it('draws random quotes among the matches only, never cached', async () => {
    for (const backend of ['sqlite', 'meilisearch'] as const) {
      for (let i = 0; i < 20; i++) {
        const response = await get(apps[backend], '/quotes/random?q=happy+famil&fields=id,quote');
        expect(response.statusCode).toBe(200);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.json()).toMatchObject({ id: 90 });
      }
    }
  });
});
