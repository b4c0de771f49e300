import { describe, expect, it } from 'vitest';
import { SAMPLE_GAP, sampleByIdsRequest, sampleRunRequests } from './meilisearch/request.ts';
import { distinctDrawer, drawDistinct, seededRandom } from './sample.ts';

describe('drawing distinct positions', () => {
  it('draws min(count, total) distinct positions in range', () => {
    const random = (n: number) => Math.floor(Math.random() * n);
    for (const [total, count] of [
      [0, 5],
      [1, 5],
      [5, 5],
      [6, 5],
      [1_000_000_000, 50],
    ] as const) {
      const drawn = drawDistinct(total, count, random);
      expect(drawn).toHaveLength(Math.min(total, count));
      expect(new Set(drawn).size).toBe(drawn.length);
      for (const p of drawn) expect(p >= 0 && p < total && Number.isInteger(p)).toBe(true);
    }
  });

  it('draws lazily what drawDistinct draws at once, then nothing once every position is drawn', () => {
    const stream = (draws: readonly number[]) => {
      let at = 0;
      return () => draws[at++] as number;
    };
    const draws = [4, 3, 0, 1, 0];
    const next = distinctDrawer(5, stream(draws));
    const lazy = [next(), next(), next(), next(), next()];
    expect(lazy).toEqual(drawDistinct(5, 5, stream(draws)));
    expect([...lazy].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(next()).toBeUndefined();
  });

  it('draws the same from the same seed, other draws from another, uniformly in range', () => {
    const draws = (seed: string) =>
      Array.from(
        { length: 20 },
        (
          (random) => () =>
            random(1_000)
        )(seededRandom(seed)),
      );
    expect(draws('2026-03-01\n[]')).toEqual(draws('2026-03-01\n[]'));
    expect(draws('2026-03-01\n[]')).not.toEqual(draws('2026-03-02\n[]'));
    const random = seededRandom('counts');
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const n = random(10);
      expect(n >= 0 && n < 10 && Number.isInteger(n)).toBe(true);
      counts[n] = (counts[n] as number) + 1;
    }
    // 9 degrees of freedom: a chi-square above 60 has a probability below 1e-9.
    expect(counts.reduce((sum, c) => sum + (c - 1_000) ** 2 / 1_000, 0)).toBeLessThan(60);
    expect(seededRandom('x')(2 ** 48)).toBeLessThan(2 ** 48);
    expect(() => seededRandom('x')(0)).toThrow();
    expect(() => seededRandom('x')(2 ** 53)).toThrow();
  });

  it('draws from a range as wide as the safe integers, ids spread up to 2^53 - 1', () => {
    const random = seededRandom('wide');
    const n = Number.MAX_SAFE_INTEGER;
    const draws = Array.from({ length: 1_000 }, () => random(n));
    for (const d of draws) expect(Number.isSafeInteger(d) && d >= 0 && d < n).toBe(true);
    // Uniform over 2^53: the top 5 bits vary as much as the rest (a 48-bit draw would leave
    // every draw below 2^48, 1/32 of the range).
    const high = draws.filter((d) => d >= 2 ** 48).length;
    expect(high).toBeGreaterThan(900);
    const halves = draws.filter((d) => d >= n / 2).length;
    expect(halves).toBeGreaterThan(400);
    expect(halves).toBeLessThan(600);
  });

  it('is the start of a Fisher-Yates shuffle: a given stream of draws gives known positions', () => {
    // Draws of 0 take the next slot in order; drawing the last slot each time takes 4, then
    // what was swapped into it (0, then 1).
    expect(drawDistinct(5, 3, () => 0)).toEqual([0, 1, 2]);
    expect(drawDistinct(5, 3, (n) => n - 1)).toEqual([4, 0, 1]);
    // Taking slot 4 first moves 0 there: a later draw of that slot gives 0.
    const stream = [4, 3, 0];
    expect(drawDistinct(5, 3, () => stream.shift() as number)).toEqual([4, 0, 2]);
  });
});

describe('Meilisearch sample reads', () => {
  it('read nearby offsets in one request and far ones apart', () => {
    const runs = sampleRunRequests('author_id = 1', [900, 5, 5 + SAMPLE_GAP, 40, 5 + SAMPLE_GAP + 1], null);
    expect(runs.map((r) => [r.offset, r.request.limit])).toEqual([
      [5, SAMPLE_GAP + 2],
      [40, 1],
      [900, 1],
    ]);
    expect(runs[0]?.request.filter).toBe('author_id = 1');
    expect(runs[0]?.request.fields).toContain('catalogue_version');
  });

  it('read drawn ids with the build marker', () => {
    expect(sampleByIdsRequest([3, 7], ['quote'])).toEqual({
      filter: 'id IN [3, 7]',
      offset: 0,
      limit: 2,
      fields: ['quote', 'id', 'catalogue_version'],
    });
  });
});
