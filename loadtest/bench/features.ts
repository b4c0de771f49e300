/**
 * Benchmark paths of the range filters, several random quotes and the quote of the day: each
 * set pairwise distinct (so no answer comes from a cache), with bounds wide enough that every
 * request finds quotes in a generated catalogue (lengths 40 to 600, years 1000 to 2024).
 */
import type { Random } from '../lib/mix.ts';

export const FEATURE_KINDS = ['ranges', 'random count=50', 'today'] as const;
export type FeatureKind = (typeof FEATURE_KINDS)[number];

const between = (random: Random, low: number, high: number) => low + Math.floor(random() * (high - low + 1));

/**
 * Length and date ranges that each keep about half of a generated catalogue, so that every
 * request finds quotes even in the benchmark's smallest catalogues (a thousand quotes).
 */
function rangeParams(random: Random): string {
  const min = between(random, 40, 100);
  const from = between(random, 1000, 1300);
  const month = String(between(random, 1, 12)).padStart(2, '0');
  return `min_length=${min}&max_length=${min + between(random, 300, 500)}&published_from=${from}-${month}&published_to=${from + between(random, 600, 700)}`;
}

/** Up to `count` distinct paths of each kind. */
export function featurePaths(random: Random, count: number): Record<FeatureKind, string[]> {
  const kinds = {} as Record<FeatureKind, string[]>;
  const draw = (make: () => string) => {
    const seen = new Set<string>();
    for (let tries = 0; seen.size < count && tries < count * 20; tries++) seen.add(make());
    return [...seen];
  };
  kinds.ranges = draw(() => {
    // Half sorted by length: a range with a sort on the ranged key.
    const sort = random() < 0.5 ? '&sort=quote_length&order=desc' : '';
    return `/quotes?${rangeParams(random)}${sort}`;
  });
  kinds['random count=50'] = draw(
    () => `/quotes/random?count=50&${rangeParams(random)}&fields=id,author,quote`,
  );
  kinds.today = draw(() => `/quotes/today?${rangeParams(random)}`);
  return kinds;
}
