/**
 * On Meilisearch, list pages read forward in one request and quotes read by id are passed through
 * as the engine wrote them (`listJson`, `getJson`, catalogue/meilisearch/json.ts) instead of
 * being parsed and serialised again.
 * These tests hold the two paths to the same bytes over HTTP on a real engine, found as every
 * Meilisearch suite finds one (test-support/meilisearch-engine.ts): for every envelope,
 * projection, error and deep page, and for texts the engine must escape.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openMeiliCatalogue } from '../catalogue/meilisearch/catalogue.ts';
import type { CatalogueIndex, JsonEnvelope, ListQuery, Quote } from '../catalogue/port.ts';
import { fixtureApp, get } from '../test-app.ts';
import { FIXTURE_QUOTES } from '../test-support/fixtures.ts';
import {
  AWKWARD,
  awkwardQuotes,
  expectAwkwardTextsParseBack,
  expectSameAnswer,
  listPaths,
  objectsOnly,
} from '../test-support/json-paths.ts';
import { buildMeiliCatalogue, type MeiliCatalogue } from '../test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from '../test-support/meilisearch-engine.ts';

const SUITE = 'list answers passed through';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

describe.skipIf('skip' in source)('list answers passed through on a real engine', () => {
  const quotes = [...FIXTURE_QUOTES, ...awkwardQuotes()];
  let engine: MeiliEngine | undefined;
  let built: MeiliCatalogue | undefined;
  let catalogue: CatalogueIndex | undefined;
  let apps: { passed: FastifyInstance; objects: FastifyInstance } | undefined;
  let paths: string[] = [];

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    built = await buildMeiliCatalogue(engine, quotes);
    catalogue = openMeiliCatalogue({
      host: engine.host,
      apiKey: built.env.MEILI_API_KEY,
      index: built.env.MEILI_INDEX as string,
      timeoutMs: 10_000,
      // Pages from the 30th quote on are deep: read after a count, and not passed through.
      shallowOffset: 30,
    });
    apps = {
      passed: await fixtureApp('unused.db', {}, { catalogue }),
      objects: await fixtureApp('unused.db', {}, { catalogue: objectsOnly(catalogue, async () => {}) }),
    };
    paths = listPaths(quotes);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(Object.values(apps ?? {}).map((app) => app.close()));
    await catalogue?.close();
    try {
      await built?.remove();
    } finally {
      await engine?.stop();
    }
  });

  const envelope: JsonEnvelope = { head: '', tail: () => '' };
  const query = (page: number): ListQuery => ({ filters: {}, sort: [], page, limit: 10, fields: null });

  it('passes a page read forward through as bytes, and gives a deep page as objects', async () => {
    const listJson = (catalogue as CatalogueIndex).listJson?.bind(catalogue);
    expect(listJson).toBeDefined();
    const shallow = await listJson?.(query(1), envelope);
    expect(Buffer.isBuffer(shallow)).toBe(true);
    const items = JSON.parse((shallow as Buffer).toString('utf8')) as Quote[];
    expect(items.map((q) => q.id)).toEqual(
      quotes
        .map((q) => q.id)
        .sort((a, b) => a - b)
        .slice(0, 10),
    );
    // Texts the engine escapes pass through too.
    const awkward = await listJson?.(
      {
        filters: { author_id: [99_001] },
        sort: [],
        page: 1,
        limit: 100,
        fields: ['id', 'author', 'work', 'genre', 'source', 'quote'],
      },
      envelope,
    );
    expect(Buffer.isBuffer(awkward)).toBe(true);
    expect((JSON.parse((awkward as Buffer).toString('utf8')) as Quote[]).map((q) => q.quote)).toEqual(
      AWKWARD.filter((_text, i) => i % 2 === 0),
    );
    // `q` in an asked order is a listing like any other, passed through too.
    const searched: ListQuery = {
      filters: { q: ['line'] },
      sort: [{ field: 'quote_length', direction: 'desc' }],
      page: 1,
      limit: 10,
      fields: ['id', 'quote'],
    };
    const matched = await listJson?.(searched, envelope);
    expect(Buffer.isBuffer(matched)).toBe(true);
    const reference = await (catalogue as CatalogueIndex).list(searched);
    expect(reference.items.length).toBeGreaterThan(0);
    expect(JSON.parse((matched as Buffer).toString('utf8'))).toEqual(reference.items);
    const deep = await listJson?.(query(4), envelope);
    expect(Buffer.isBuffer(deep)).toBe(false);
    expect(deep).toMatchObject({ total: quotes.length });
  });

  it('answers every list request with the bytes the serialiser writes', async () => {
    const { passed, objects } = apps as NonNullable<typeof apps>;
    expect(paths.length).toBeGreaterThan(300);
    let ok = 0;
    for (const path of paths) {
      const reference = await get(objects, path);
      expectSameAnswer(path, await get(passed, path), reference);
      if (reference.statusCode === 200) ok++;
    }
    expect(ok).toBeGreaterThan(paths.length * 0.9);
  });

  it('passes a quote read by id through as bytes', async () => {
    const index = catalogue as CatalogueIndex;
    for (const quote of awkwardQuotes()) {
      const written = await index.getJson?.(quote.id, null);
      expect(Buffer.isBuffer(written)).toBe(true);
      expect(JSON.parse((written as Buffer).toString('utf8'))).toEqual(quote);
    }
    expect(await index.getJson?.(123_456_789, null)).toBeNull();
  });

  it('answers every quote by id with the bytes the serialiser writes', async () => {
    const { passed, objects } = apps as NonNullable<typeof apps>;
    const projections = ['', '?fields=quote', '?fields=id,genre,quote', '?fields=language,id,source'];
    let ok = 0;
    for (const id of [...quotes.map((q) => q.id), 123_456_789]) {
      for (const fields of projections) {
        const path = `/quotes/${id}${fields}`;
        const reference = await get(objects, path);
        const response = await get(passed, path);
        expect({ path, status: response.statusCode }).toEqual({ path, status: reference.statusCode });
        expect(response.headers['content-type']).toBe(reference.headers['content-type']);
        expect(response.headers.etag).toBe(reference.headers.etag);
        expect({ path, body: response.body }).toEqual({ path, body: reference.body });
        if (reference.statusCode === 200) ok++;
      }
    }
    expect(ok).toBe(quotes.length * projections.length);
  });

  it('writes escaped texts that parse back to the stored quotes', async () => {
    await expectAwkwardTextsParseBack((apps as NonNullable<typeof apps>).passed);
  });
});
