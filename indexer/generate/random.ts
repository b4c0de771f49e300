/** Seeded randomness of the generator: one PRNG and the distributions drawn from it. */

/**
 * sfc32 (Doty-Humphrey's Small Fast Chaotic generator) seeded through splitmix32: passes
 * PractRand, uses only 32-bit integer arithmetic, and so gives the same stream on every platform.
 */
export class Random {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const splitmix = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = Math.imul(s ^ (s >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.#a = splitmix();
    this.#b = splitmix();
    this.#c = splitmix();
    this.#d = splitmix();
    for (let i = 0; i < 12; i++) this.float();
  }

  /** Uniform in [0, 1). */
  float(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    const c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** Standard normal deviate (Box–Muller). */
  normal(): number {
    const u = 1 - this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.float());
  }

  /** A uniformly random permutation of 0..n-1 (Fisher–Yates). */
  permutation(n: number): Int32Array {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) out[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = out[i] as number;
      out[i] = out[j] as number;
      out[j] = t;
    }
    return out;
  }
}

/** A fixed discrete distribution, normalised once so that a draw is one binary search. */
export interface Table<T> {
  values: readonly T[];
  cumulative: Float64Array;
}

export function table<T>(entries: readonly (readonly [T, number])[]): Table<T> {
  const cumulative = Float64Array.from(entries, ([, weight]) => weight);
  normaliseSegment(cumulative, 0, cumulative.length);
  return { values: entries.map(([value]) => value), cumulative };
}

export function choose<T>(rng: Random, { values, cumulative }: Table<T>): T {
  return values[searchCumulative(cumulative, 0, values.length, rng.float())] as T;
}

/** Index in [from, to) of the first cumulative weight above `u`; the segment ends at exactly 1. */
export function searchCumulative(cumulative: Float64Array, from: number, to: number, u: number): number {
  let lo = from;
  let hi = to - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cumulative[mid] as number) > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Turns weights in [from, to) into cumulative probabilities ending at exactly 1. */
export function normaliseSegment(values: Float64Array, from: number, to: number): void {
  let sum = 0;
  for (let i = from; i < to; i++) {
    sum += values[i] as number;
    values[i] = sum;
  }
  for (let i = from; i < to; i++) values[i] = (values[i] as number) / sum;
  values[to - 1] = 1;
}

export function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}
