/**
 * `randomSample` of the Meilisearch adapter on a real engine, with a small one-read limit so that
 * both ways of reading run on a small catalogue: ids with the count then the quotes by id (few
 * matches), and offset by offset (many matches). Distinct, matching, complete, and uniform
 * (chi-square thresholds a fair sampler crosses less than once in a billion runs).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generatedQuotes } from '../../test-support/engine-apps.ts';
import { buildMeiliCatalogue, type MeiliCatalogue } from '../../test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from '../../test-support/meilisearch-engine.ts';
import { type CatalogueIndex, normaliseFilters, type Quote } from '../port.ts';
import { openMeiliCatalogue } from './catalogue.ts';

const SUITE = 'random samples (Meilisearch adapter)';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

function chiSquare(observed: readonly number[]): number {
  const total = observed.reduce((a, b) => a + b, 0);
  const expected = total / observed.length;
  return observed.reduce((sum, o) => sum + (o - expected) ** 2 / expected, 0);
}

describe.skipIf('skip' in source)(SUITE, () => {
  const quotes: Quote[] = generatedQuotes(400, 3);
  let engine: MeiliEngine | undefined;
  let built: MeiliCatalogue | undefined;
  let index: CatalogueIndex;
  /** The same catalogue read offset by offset only, never by rejection of candidate ids. */
  let byOffsets: CatalogueIndex;

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    built = await buildMeiliCatalogue(engine, quotes);
    index = openMeiliCatalogue({
      host: engine.host,
      apiKey: built.env.MEILI_API_KEY,
      index: built.env.MEILI_INDEX as string,
      timeoutMs: 10_000,
      sampleScan: 20,
    });
    await index.info();
    byOffsets = openMeiliCatalogue({
      host: engine.host,
      apiKey: built.env.MEILI_API_KEY,
      index: built.env.MEILI_INDEX as string,
      timeoutMs: 10_000,
      sampleScan: 20,
      sampleByIds: false,
    });
  }, 120_000);

  afterAll(async () => {
    await index?.close();
    await byOffsets?.close();
    await built?.remove();
    await engine?.stop();
  });

  const authors = [...new Set(quotes.map((q) => q.author_id))];
  const few = authors.find((a) => {
    const n = quotes.filter((q) => q.author_id === a).length;
    return n >= 4 && n <= 6;
  }) as number;

  it('reads few matches by id and many by rejection or offset by offset, always distinct and matching', async () => {
    for (const reader of [index, byOffsets])
      for (const [filters, n] of [
        [{}, 50],
        [{ author_id: [String(few)] }, 50],
        [{ author_id: [String(few)] }, 2],
        [{ category: ['fiction'] }, 37],
      ] as const) {
        const normalised = normaliseFilters(filters);
        const matching = new Map(
          quotes
            .filter(
              (q) =>
                (!('author_id' in filters) || q.author_id === few) &&
                (!('category' in filters) || q.category.toLowerCase() === 'fiction'),
            )
            .map((q) => [q.id, q]),
        );
        const drawn = await reader.randomSample(normalised, null, n);
        expect(drawn).toHaveLength(Math.min(n, matching.size));
        expect(new Set(drawn.map((q) => q.id)).size).toBe(drawn.length);
        for (const q of drawn) expect(q).toEqual(matching.get(q.id as number));
      }
    expect(await index.randomSample(normaliseFilters({ author_id: ['999999'] }), null, 3)).toEqual([]);
  });

  it('draws uniformly over the whole catalogue, by rejection and offset by offset', async () => {
    for (const reader of [index, byOffsets]) {
      const buckets = new Array<number>(8).fill(0);
      const position = new Map(quotes.map((q, i) => [q.id, i]));
      for (let i = 0; i < 60; i++) {
        for (const q of await reader.randomSample({}, ['id'], 50)) {
          const at = Math.floor(((position.get(q.id as number) as number) * buckets.length) / quotes.length);
          buckets[at] = (buckets[at] as number) + 1;
        }
      }
      // 7 degrees of freedom: P(chi-square > 55) is below 1e-9.
      expect(chiSquare(buckets)).toBeLessThan(55);
    }
  }, 60_000);

  it('draws among many matches of a filter uniformly, by rejection of candidate ids and offset by offset', async () => {
    const filters = normaliseFilters({ category: ['fiction'] });
    const matching = quotes.filter((q) => q.category.toLowerCase() === 'fiction').map((q) => q.id);
    expect(matching.length).toBeGreaterThan(20);
    for (const reader of [index, byOffsets]) {
      const seen = new Map(matching.map((id) => [id, 0]));
      // Ten draws of each match expected.
      const rounds = matching.length;
      for (let i = 0; i < rounds; i++) {
        const drawn = await reader.randomSample(filters, ['id'], 10);
        expect(new Set(drawn.map((q) => q.id)).size).toBe(10);
        for (const q of drawn) seen.set(q.id as number, (seen.get(q.id as number) ?? Number.NaN) + 1);
      }
      expect(seen.size).toBe(matching.length);
      // k = matches - 1 degrees of freedom: mean k, standard deviation sqrt(2k); beyond ten of
      // them a fair sampler goes less than once in a billion runs.
      const k = matching.length - 1;
      expect({
        reader: reader === index ? 'by rejection' : 'by offsets',
        chiSquare: chiSquare([...seen.values()]) < k + 10 * Math.sqrt(2 * k),
      }).toEqual({ reader: reader === index ? 'by rejection' : 'by offsets', chiSquare: true });
    }
  }, 60_000);

  it('draws every ordered pair of a few matches equally often, by id', async () => {
    const ids = quotes.filter((q) => q.author_id === few).map((q) => q.id);
    const cells = new Map<string, number>();
    for (const a of ids) for (const b of ids) if (a !== b) cells.set(`${a},${b}`, 0);
    const filters = normaliseFilters({ author_id: [String(few)] });
    for (let i = 0; i < cells.size * 20; i++) {
      const key = (await index.randomSample(filters, ['id'], 2)).map((q) => q.id).join(',');
      cells.set(key, (cells.get(key) as number) + 1);
    }
    expect(cells.size).toBe(ids.length * (ids.length - 1));
    // At most 29 degrees of freedom: P(chi-square > 130) is below 1e-13.
    expect(chiSquare([...cells.values()])).toBeLessThan(130);
  }, 60_000);
});
