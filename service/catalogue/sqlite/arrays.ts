/** Searches and checks over the sorted arrays and dictionaries of the in-memory columns. */
import { compareCodePoints } from '../port.ts';

/** First index i with values[i] > x, in an ascending array. */
export function upperBound(values: Float64Array, x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function cheapest<K extends string>(costs: Record<K, number>): K {
  let best: K | null = null;
  for (const name of Object.keys(costs) as K[]) {
    if (best === null || costs[name] < costs[best]) best = name;
  }
  return best as K;
}

/** First index of a dictionary sorted by code point whose value is not below `value`. */
export function findFirst(sorted: readonly string[], value: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodePoints(sorted[mid] as string, value) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Rank of a value in a dictionary sorted by code point, or -1. */
export function findText(sorted: readonly string[], value: string): number {
  const at = findFirst(sorted, value);
  return at < sorted.length && sorted[at] === value ? at : -1;
}

/** Position of a number in an ascending array (a dictionary, the ids in order), or -1. */
export function findNumber(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo] === value ? lo : -1;
}

/** True when every value is an index below `limit`. */
export function allBelow(values: Int32Array, limit: number): boolean {
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as number;
    if (value < 0 || value >= limit) return false;
  }
  return true;
}

export function present<T>(values: readonly T[] | undefined): values is readonly T[] {
  return values !== undefined && values.length > 0;
}

/** The values in both ascending arrays, ascending: one merge walk. */
export function intersectAscending(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(Math.min(a.length, b.length));
  let found = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x < y) i++;
    else if (y < x) j++;
    else {
      out[found++] = x;
      i++;
      j++;
    }
  }
  return out.subarray(0, found);
}
