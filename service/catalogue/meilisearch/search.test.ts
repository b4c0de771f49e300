/**
 * The full-text search suite (search.suite.ts) on a real Meilisearch, found as every Meilisearch
 * suite finds one (test-support/meilisearch-engine.ts). The indexer builds with the indexer's key
 * and the reader searches with the service's key, both as `deploy/meili-keys.ts` scopes them.
 */
import { randomBytes } from 'node:crypto';
import { Meilisearch } from 'meilisearch';
import { expect, inject } from 'vitest';
import {
  buildWith,
  createDeploymentKeys,
  dropFilterable,
  readerThroughProxy,
} from '../../test-support/meilisearch-catalogue.ts';
import { announceSkip, meiliEngineSource } from '../../test-support/meilisearch-engine.ts';
import { type CatalogueIndex, CatalogueUnavailableError, type ListQuery, type Quote } from '../port.ts';
import { describeSearch, relevanceQuotes } from '../search.suite.ts';
import { openMeiliCatalogue } from './catalogue.ts';

const SUITE = 'full-text search';
const source = await meiliEngineSource(inject('containerRuntime'));

/** An index built with `searchCutoffMs` (default: the builder's), under the suite's keys. */
type Load = (quotes: Quote[], searchCutoffMs?: number) => Promise<CatalogueIndex>;
let loadWith: Load | undefined;
let engineAdmin: Meilisearch | undefined;
let lastUid = '';
/** Where the suite's readers read, and with which key. */
let readerAccess = { host: '', apiKey: '' };

/** The matches of "quiet garden" in {@link relevanceQuotes}, longest first (ties by id). */
function longestFirstMatches(): { id: number }[] {
  return relevanceQuotes()
    .filter((quote) => quote.id >= 2)
    .sort((a, b) => b.quote_length - a.quote_length || a.id - b.id)
    .map((quote) => ({ id: quote.id }));
}

describeSearch(
  'meilisearch',
  async () => {
    if ('skip' in source) throw new Error(source.skip);
    const engine = await source.start(SUITE);
    const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
    engineAdmin = admin;
    const prefix = `search_${randomBytes(4).toString('hex')}`;
    const { indexerKey, searchKey } = await createDeploymentKeys(admin, prefix, [`${prefix}_*`]);
    readerAccess = { host: engine.host, apiKey: searchKey.key };
    const opened: CatalogueIndex[] = [];
    let builds = 0;
    const load: Load = async (quotes, searchCutoffMs) => {
      // An index per catalogue: each reader keeps serving the one it opened.
      const live = `${prefix}_${++builds}`;
      lastUid = live;
      await buildWith(
        {
          host: engine.host,
          apiKey: indexerKey.key,
          index: live,
          taskTimeoutMs: 120_000,
          ...(searchCutoffMs === undefined ? {} : { searchCutoffMs }),
        },
        quotes,
      );
      const index = openMeiliCatalogue({
        host: engine.host,
        apiKey: searchKey.key,
        index: live,
        timeoutMs: 10_000,
      });
      opened.push(index);
      return index;
    };
    loadWith = load;
    return {
      load: (quotes) => load(quotes),
      async teardown() {
        for (const index of opened) await index.close();
        try {
          const ours = (await admin.getRawIndexes({ limit: 1000 })).results.filter((i) =>
            i.uid.startsWith(prefix),
          );
          for (const { uid } of ours) await admin.deleteIndex(uid).waitTask({ timeout: 30_000 });
          await admin.deleteKey(indexerKey.uid);
          await admin.deleteKey(searchKey.uid);
        } finally {
          await engine.stop();
        }
      },
    };
  },
  'skip' in source ? { skip: announceSkip(SUITE, source.skip) } : {},
  (it) => {
    it('refuses (503) a page the engine left unranked when its time budget ran out, and serves an asked order, which ranks nothing', async () => {
      // A budget of 0 ms: every ranking is cut short at once, as a slow search would be.
      const index = await (loadWith as Load)(relevanceQuotes(), 0);
      const ranked: ListQuery = {
        filters: { q: ['quiet', 'garden'] },
        sort: [],
        page: 1,
        limit: 5,
        fields: ['id'],
        ranked: true,
      };
      await expect(index.list(ranked)).rejects.toThrow(CatalogueUnavailableError);
      await expect(index.list(ranked)).rejects.toThrow(/cut the search short/);
      const sorted: ListQuery = {
        ...ranked,
        ranked: undefined,
        sort: [{ field: 'quote_length', direction: 'desc' }],
      };
      // An asked order ranks nothing: the matches are read as a listing, exact whatever the budget.
      expect(await index.list(sorted)).toEqual({ items: longestFirstMatches().slice(0, 5), total: 6 });
      // Nothing to rank: the matches in the engine's own order, exact, and random picks.
      const unranked = await index.list({ ...ranked, filters: { q: ['garden'] } });
      expect(unranked.total).toBe(6);
      expect(await index.random({ q: ['quiet', 'garden'] }, ['id'])).not.toBeNull();
    }, 60_000);

    it('reads q in an asked order, and random quotes, as listings: no search, a late page from the far end', async () => {
      await (loadWith as Load)(relevanceQuotes());
      const {
        proxy,
        reader: index,
        close,
      } = await readerThroughProxy({
        ...readerAccess,
        index: lastUid,
        timeoutMs: 10_000,
        // Every page planned on the exact total, as a page past the first thousand matches is.
        shallowOffset: 0,
      });
      try {
        const query: ListQuery = {
          filters: { q: ['quiet', 'garden'] },
          sort: [{ field: 'quote_length', direction: 'desc' }],
          page: 2,
          limit: 4,
          fields: ['id'],
        };
        expect(await index.list(query)).toEqual({ items: longestFirstMatches().slice(4), total: 6 });
        expect(await index.random(query.filters, ['id'])).toEqual(
          expect.objectContaining({ id: expect.any(Number) }),
        );
        expect(await index.randomSample(query.filters, ['id'], 3)).toHaveLength(3);
        const paths = proxy.requests.map((r) => r.path);
        expect(paths.filter((p) => /\/(multi-)?search$/.test(p))).toEqual([]);
        // The second page of two is the first of the matches read shortest first.
        expect(
          proxy.requests.some(
            (r) => r.path.endsWith('/documents/fetch') && r.body.includes('"quote_length:asc"'),
          ),
        ).toBe(true);
      } finally {
        await close();
      }
    }, 60_000);

    it('answers 503 naming the indexer for an index built without the search fields', async () => {
      const index = await (loadWith as Load)(relevanceQuotes());
      const admin = engineAdmin as Meilisearch;
      // Make the index just built look like one of the release before q.
      await dropFilterable(admin, lastUid, (a) => !a.startsWith('q_'), ['author', 'work']);
      const query: ListQuery = {
        filters: { q: ['quiet', 'garden'] },
        sort: [],
        page: 1,
        limit: 5,
        fields: ['id'],
      };
      for (const call of [
        () => index.list({ ...query, ranked: true }),
        () => index.list(query),
        () => index.list({ ...query, sort: [{ field: 'quote_length', direction: 'desc' }] }),
        () => index.random(query.filters, ['id']),
        () => index.randomSample(query.filters, ['id'], 3),
        () => index.firstMatch(query.filters, [2, 3], ['id']),
        () => index.facets({ filters: query.filters, facets: ['genre'], limit: 5 }),
      ]) {
        await expect(call()).rejects.toThrow(CatalogueUnavailableError);
        await expect(call()).rejects.toThrow(/run the indexer/);
      }
      // Everything without q still serves.
      expect((await index.list({ ...query, filters: {} })).total).toBe(7);
    }, 60_000);

    it('names the ranges, not the search fields, for an index built with q but before ranges', async () => {
      const index = await (loadWith as Load)(relevanceQuotes());
      const admin = engineAdmin as Meilisearch;
      // Make the index just built look like one of a release with q but without range filters.
      await dropFilterable(admin, lastUid, (a) => a !== 'quote_length' && a !== 'publish_day');
      const query: ListQuery = {
        filters: { q: ['quiet', 'garden'], ranges: { min_length: 1 } },
        sort: [],
        page: 1,
        limit: 5,
        fields: ['id'],
        ranked: true,
      };
      await expect(index.list(query)).rejects.toThrow(/cannot filter ranges.*run the indexer/);
      // The same search without a range still serves: the index has its search fields.
      const { ranges: _, ...withoutRanges } = query.filters;
      expect((await index.list({ ...query, filters: withoutRanges })).total).toBe(6);
    }, 60_000);
  },
);
