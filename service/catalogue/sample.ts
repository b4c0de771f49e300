import { createHash } from 'node:crypto';

/**
 * Several random quotes at once (`/quotes/random?count=N`): positions drawn uniformly without
 * replacement among the matches, shared by every backend so that they draw alike.
 */

/** Most quotes one request may draw. */
export const MAX_SAMPLE = 50;

/**
 * `min(count, total)` distinct positions of [0, total), in draw order: every ordered selection is
 * equally likely (the first `count` steps of a Fisher-Yates shuffle, with the swapped slots kept in
 * a map, so the cost is O(count) whatever `total`). `random(n)` is uniform in [0, n).
 */
export function drawDistinct(total: number, count: number, random: (n: number) => number): number[] {
  const k = Math.min(count, total);
  const moved = new Map<number, number>();
  const out: number[] = [];
  for (let i = 0; i < k; i++) {
    const j = i + random(total - i);
    out.push(moved.get(j) ?? j);
    moved.set(j, moved.get(i) ?? i);
  }
  return out;
}

/**
 * Distinct positions of [0, total), one per call, each uniform among those not drawn yet: the
 * draws of {@link drawDistinct}, made lazily for a caller that does not know how many it needs.
 * Undefined once every position is drawn.
 */
export function distinctDrawer(total: number, random: (n: number) => number): () => number | undefined {
  const moved = new Map<number, number>();
  let i = 0;
  return () => {
    if (i >= total) return undefined;
    const j = i + random(total - i);
    const out = moved.get(j) ?? j;
    moved.set(j, moved.get(i) ?? i);
    i++;
    return out;
  };
}

/** Largest range one 48-bit word draws from, as crypto.randomInt. */
const WORD_RANGE = 2 ** 48;
/** Largest range two words draw from: every safe integer, so any span of ids the catalogue can hold. */
const WIDE_RANGE = 2 ** 53;

/**
 * A deterministic `random(n)` for `seed`, uniform in [0, n) for n up to 2^53: 48-bit words of
 * SHA-256(seed, block number) in turn, a draw past the largest multiple of n drawn again. A range
 * past 2^48 (ids spread up to 2^53 - 1) takes a word and 5 bits of the next. The same seed gives
 * the same draws on every machine and in every release that keeps this function.
 */
export function seededRandom(seed: string): (n: number) => number {
  let block = 0;
  let words: number[] = [];
  const word = () => {
    if (words.length === 0) {
      const digest = createHash('sha256').update(`${seed}\n${block++}`).digest();
      // Five whole 48-bit words of the 256-bit digest.
      words = [0, 6, 12, 18, 24].map((at) => digest.readUIntBE(at, 6));
    }
    return words.shift() as number;
  };
  return (n) => {
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`range ${n} out of bounds`);
    const wide = n > WORD_RANGE;
    const range = wide ? WIDE_RANGE : WORD_RANGE;
    const limit = range - (range % n);
    for (;;) {
      const w = wide ? word() * 32 + (word() % 32) : word();
      if (w < limit) return w % n;
    }
  };
}
