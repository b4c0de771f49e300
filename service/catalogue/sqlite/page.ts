/** Reads one sorted page of a selection over the in-memory columns (sqlite/query.ts). */
import type { SortKey } from '../port.ts';
import { cheapest, upperBound } from './arrays.ts';
import type { CatalogueColumns, Selection, Strategies } from './query.ts';
import type { Columns, ProfileKey } from './schema.ts';

/** Sets of at most this many quotes are simply gathered and split by the sort keys. */
const GATHER_BELOW = 64;
/** Explicit sets this small are sorted by comparison rather than split by counting. */
const COMPARE_BELOW = 24;

/** A group of the page: a set of quotes and the share of the page it holds. */
interface Share<T> {
  set: T;
  from: number;
  count: number;
}

/** Reads one page: the sort keys in turn, each narrowing to the groups the page falls in. */
export class PageReader {
  readonly #index: CatalogueColumns;
  readonly #c: Columns;
  readonly #n: number;
  readonly #strategies: Strategies;

  constructor(index: CatalogueColumns, columns: Columns, strategies: Strategies) {
    this.#index = index;
    this.#c = columns;
    this.#n = index.count;
    this.#strategies = strategies;
  }

  /** Appends the ords at [from, from + count) of a profile set in `keys` order to `out`. */
  profiles(set: Selection, keys: readonly SortKey[], from: number, count: number, out: number[]): void {
    const key = keys[0] as SortKey;
    if (set.profiles !== null && set.total <= GATHER_BELOW) {
      this.ords(this.#gather(set.profiles, set.total), set.profiles.length === 1, keys, from, count, out);
    } else if (key.field === 'id') {
      this.#byId(set, key.direction === 'desc', from, count, out);
    } else if (key.field === 'quote_length') {
      this.#byLength(set, keys, from, count, out);
    } else {
      for (const share of this.#profileShares(set, key.field, key.direction === 'desc', from, count)) {
        this.profiles(share.set, keys.slice(1), share.from, share.count, out);
      }
    }
  }

  /**
   * Appends the ords at [from, from + count) of an explicit set of ords in `keys` order to `out`.
   * `ascending` says the set is in id order; splitting keeps the order within each group.
   */
  ords(
    set: Int32Array,
    ascending: boolean,
    keys: readonly SortKey[],
    from: number,
    count: number,
    out: number[],
  ): void {
    const key = keys[0] as SortKey;
    if (key.field === 'id') {
      const sorted = ascending ? set : set.slice().sort();
      const desc = key.direction === 'desc';
      for (let i = from; i < from + count; i++) out.push(sorted[desc ? sorted.length - 1 - i : i] as number);
      return;
    }
    if (set.length < COMPARE_BELOW) {
      const sorted = Array.from(set).sort(this.#comparator(keys));
      for (let i = from; i < from + count; i++) out.push(sorted[i] as number);
      return;
    }
    // Split by the key's rank, counting first so that only the groups of the page are gathered.
    const { rank, viaProfile } = this.#rankArray(key.field);
    const profileOf = this.#c.profile;
    const { sizes, slots } = this.#index.scratch(key.field);
    const touched: number[] = [];
    for (const ord of set) {
      const r = (viaProfile ? rank[profileOf[ord] as number] : rank[ord]) as number;
      if (sizes[r] === 0) touched.push(r);
      sizes[r] = (sizes[r] as number) + 1;
    }
    const shares = sharesOf(sizes, touched, key.direction === 'desc', from, count);
    const buckets = shares.map((s, i) => {
      slots[s.set] = i + 1;
      return new Int32Array(sizes[s.set] as number);
    });
    for (const r of touched) sizes[r] = 0;
    const filled = new Int32Array(shares.length);
    for (const ord of set) {
      const slot = slots[(viaProfile ? rank[profileOf[ord] as number] : rank[ord]) as number] as number;
      if (slot === 0) continue;
      (buckets[slot - 1] as Int32Array)[filled[slot - 1] as number] = ord;
      filled[slot - 1] = (filled[slot - 1] as number) + 1;
    }
    for (const s of shares) slots[s.set] = 0;
    for (const [i, s] of shares.entries()) {
      this.ords(buckets[i] as Int32Array, ascending, keys.slice(1), s.from, s.count, out);
    }
  }

  /** Splits a profile set by the rank of a profile key, keeping the groups the page falls in. */
  #profileShares(
    set: Selection,
    key: ProfileKey,
    desc: boolean,
    from: number,
    count: number,
  ): Share<Selection>[] {
    const groups = this.#index.groups(key);
    const size = groups.start.length - 1;
    if (set.profiles === null) {
      return rangeShares(groups.cumulative, size, desc, from, count).map((s) => ({
        set: {
          profiles: groups.profiles.subarray(
            groups.start[s.set] as number,
            groups.start[s.set + 1] as number,
          ),
          total: (groups.cumulative[s.set + 1] as number) - (groups.cumulative[s.set] as number),
        },
        from: s.from,
        count: s.count,
      }));
    }
    const rank = this.#index.ranks(key);
    const profileSizes = this.#index.profileSizes;
    const { sizes, slots } = this.#index.scratch(key);
    const touched: number[] = [];
    for (const profile of set.profiles) {
      const r = rank[profile] as number;
      if (sizes[r] === 0) touched.push(r);
      sizes[r] = (sizes[r] as number) + (profileSizes[profile] as number);
    }
    const shares = sharesOf(sizes, touched, desc, from, count);
    const totals = shares.map((s) => sizes[s.set] as number);
    for (const r of touched) sizes[r] = 0;
    const buckets = shares.map((s, i): number[] => {
      slots[s.set] = i + 1;
      return [];
    });
    for (const profile of set.profiles) {
      const slot = slots[rank[profile] as number] as number;
      if (slot !== 0) (buckets[slot - 1] as number[]).push(profile);
    }
    for (const s of shares) slots[s.set] = 0;
    return shares.map((s, i) => ({
      set: { profiles: Int32Array.from(buckets[i] as number[]), total: totals[i] as number },
      from: s.from,
      count: s.count,
    }));
  }

  /** A profile set in id order. */
  #byId(set: Selection, desc: boolean, from: number, count: number, out: number[]): void {
    const n = this.#n;
    if (set.profiles === null) {
      for (let i = from; i < from + count; i++) out.push(desc ? n - 1 - i : i);
      return;
    }
    const profiles = set.profiles;
    const want = from + count;
    const strategy =
      this.#strategies.id ??
      cheapest({
        walk: profiles.length + Math.min(n, (want * n) / set.total),
        merge: profiles.length + 3 * want * Math.log2(profiles.length + 1),
        collect: 2 * set.total * Math.log2(set.total + 1),
      });
    if (strategy === 'collect') {
      this.ords(
        this.#gather(profiles, set.total),
        false,
        [{ field: 'id', direction: desc ? 'desc' : 'asc' }],
        from,
        count,
        out,
      );
    } else if (strategy === 'merge') {
      this.#merge(profiles, desc, from, count, out);
    } else {
      const { epoch, first, last } = this.#index.markProfiles(profiles);
      const mark = this.#index.mark;
      const profileOf = this.#c.profile;
      let seen = 0;
      const step = desc ? -1 : 1;
      for (let ord = desc ? last : first; seen < want; ord += step) {
        if (mark[profileOf[ord] as number] !== epoch) continue;
        if (seen >= from) out.push(ord);
        seen++;
      }
    }
  }

  /** K-way merge of the profiles' ascending ord lists (a binary heap of list heads). */
  #merge(profiles: Int32Array, desc: boolean, from: number, count: number, out: number[]): void {
    const starts = this.#c.profile_start;
    const ords = this.#c.profile_ords;
    const sign = desc ? -1 : 1;
    // Heap entries: the position of a list's head in profile_ords, and the end of that list.
    const head = new Int32Array(profiles.length);
    const end = new Int32Array(profiles.length);
    let size = 0;
    for (const profile of profiles) {
      const a = starts[profile] as number;
      const b = starts[profile + 1] as number;
      if (a === b) continue;
      head[size] = desc ? b - 1 : a;
      end[size] = desc ? a - 1 : b;
      size++;
    }
    const keyAt = (i: number) => sign * (ords[head[i] as number] as number);
    const swap = (i: number, j: number) => {
      const h = head[i] as number;
      head[i] = head[j] as number;
      head[j] = h;
      const e = end[i] as number;
      end[i] = end[j] as number;
      end[j] = e;
    };
    const down = (start: number) => {
      let i = start;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= size) return;
        const child = l + 1 < size && keyAt(l + 1) < keyAt(l) ? l + 1 : l;
        if (keyAt(child) >= keyAt(i)) return;
        swap(i, child);
        i = child;
      }
    };
    for (let i = (size >> 1) - 1; i >= 0; i--) down(i);
    for (let taken = 0; taken < from + count && size > 0; taken++) {
      if (taken >= from) out.push(ords[head[0] as number] as number);
      head[0] = (head[0] as number) + sign;
      if (head[0] === end[0]) swap(0, --size);
      down(0);
    }
  }

  /** A profile set in quote_length order (`keys[0]`), then the rest of the keys. */
  #byLength(set: Selection, keys: readonly SortKey[], from: number, count: number, out: number[]): void {
    const desc = (keys[0] as SortKey).direction === 'desc';
    const rest = keys.slice(1);
    const order = this.#c.length_order;
    const runs = this.#index.lengthCumulative();
    const lengths = this.#c.lengths.length;
    if (set.profiles === null) {
      // Runs of equal length are ranges of length_order, already in id order.
      for (const s of rangeShares(runs, lengths, desc, from, count)) {
        const run = order.subarray(runs[s.set] as number, runs[s.set + 1] as number);
        this.ords(run, true, rest, s.from, s.count, out);
      }
      return;
    }
    const want = from + count;
    const strategy =
      this.#strategies.length ??
      cheapest({
        walk: set.profiles.length + Math.min(this.#n, (want * this.#n) / set.total),
        collect: 3 * set.total,
      });
    if (strategy === 'collect') {
      this.ords(this.#gather(set.profiles, set.total), false, keys, from, count, out);
      return;
    }
    const { epoch } = this.#index.markProfiles(set.profiles);
    this.markedByLength(epoch, 0, lengths, desc, rest, from, count, out);
  }

  /**
   * Appends the ords at [from, from + count) of the quotes of the profiles marked with `epoch`
   * whose length ranks are in [lo, hi), by length in the direction asked, then in `rest` order.
   * Each run of equal length is already in id order, and only the runs the page falls in are
   * split by `rest`.
   */
  markedByLength(
    epoch: number,
    lo: number,
    hi: number,
    desc: boolean,
    rest: readonly SortKey[],
    from: number,
    count: number,
    out: number[],
  ): void {
    const want = from + count;
    const order = this.#c.length_order;
    const runs = this.#index.lengthCumulative();
    const mark = this.#index.mark;
    const profileOf = this.#c.profile;
    let seen = 0;
    for (let k = 0; k < hi - lo && seen < want; k++) {
      const r = desc ? hi - 1 - k : lo + k;
      const members: number[] = [];
      for (let i = runs[r] as number; i < (runs[r + 1] as number); i++) {
        const ord = order[i] as number;
        if (mark[profileOf[ord] as number] === epoch) members.push(ord);
      }
      if (seen + members.length > from) {
        const local = Math.max(0, from - seen);
        const take = Math.min(members.length - local, want - Math.max(seen, from));
        this.ords(Int32Array.from(members), true, rest, local, take, out);
      }
      seen += members.length;
    }
  }

  /** The ords of a profile set (grouped by profile, not in id order). */
  #gather(profiles: Int32Array, total: number): Int32Array {
    const starts = this.#c.profile_start;
    const ords = this.#c.profile_ords;
    const out = new Int32Array(total);
    let at = 0;
    for (const profile of profiles) {
      const a = starts[profile] as number;
      const b = starts[profile + 1] as number;
      out.set(ords.subarray(a, b), at);
      at += b - a;
    }
    return out;
  }

  /** The ranks of a sort key: per ord (quote_length), or per profile. */
  #rankArray(field: Exclude<SortKey['field'], 'id'>): { rank: Int32Array; viaProfile: boolean } {
    return field === 'quote_length'
      ? { rank: this.#c.length_rank, viaProfile: false }
      : { rank: this.#index.ranks(field), viaProfile: true };
  }

  #comparator(keys: readonly SortKey[]): (a: number, b: number) => number {
    const profileOf = this.#c.profile;
    const parts = keys.map((k) => {
      const sign = k.direction === 'desc' ? -1 : 1;
      if (k.field === 'id') return { rankOf: (ord: number) => ord, sign };
      const { rank, viaProfile } = this.#rankArray(k.field);
      const rankOf = viaProfile
        ? (ord: number) => rank[profileOf[ord] as number] as number
        : (ord: number) => rank[ord] as number;
      return { rankOf, sign };
    });
    return (a, b) => {
      for (const { rankOf, sign } of parts) {
        const d = rankOf(a) - rankOf(b);
        if (d !== 0) return sign * d;
      }
      return a - b;
    };
  }
}

/**
 * Groups (ranks) of a split, in sort order, that the page [from, from + count) falls in, with
 * each one's share, given group sizes in `sizes` for the `touched` ranks (the others are empty).
 */
function sharesOf(
  sizes: Float64Array,
  touched: number[],
  desc: boolean,
  from: number,
  count: number,
): Share<number>[] {
  // Sorting few touched ranks is cheaper than scanning every rank.
  const size = sizes.length;
  const ordered = touched.length * 16 < size ? Int32Array.from(touched).sort() : null;
  const shares: Share<number>[] = [];
  let position = 0;
  const end = from + count;
  const length = ordered === null ? size : ordered.length;
  for (let k = 0; k < length && position < end; k++) {
    const i = desc ? length - 1 - k : k;
    const r = ordered === null ? i : (ordered[i] as number);
    const groupSize = sizes[r] as number;
    if (groupSize === 0) continue;
    if (position + groupSize > from) {
      const local = Math.max(0, from - position);
      shares.push({ set: r, from: local, count: Math.min(groupSize - local, end - position - local) });
    }
    position += groupSize;
  }
  return shares;
}

/** As {@link sharesOf}, for groups given by prefix sums (rank r holds [cum[r], cum[r + 1])). */
function rangeShares(
  cumulative: Float64Array,
  size: number,
  desc: boolean,
  from: number,
  count: number,
): Share<number>[] {
  const total = cumulative[size] as number;
  const end = from + count;
  const shares: Share<number>[] = [];
  // Position p in descending order is position total - 1 - p ascending: find the group by search.
  const startAt = desc ? total - 1 - from : from;
  let r = upperBound(cumulative, startAt) - 1;
  let position = desc ? total - (cumulative[r + 1] as number) : (cumulative[r] as number);
  while (position < end && r >= 0 && r < size) {
    const groupSize = (cumulative[r + 1] as number) - (cumulative[r] as number);
    if (groupSize > 0 && position + groupSize > from) {
      const local = Math.max(0, from - position);
      shares.push({ set: r, from: local, count: Math.min(groupSize - local, end - position - local) });
    }
    position += groupSize;
    r += desc ? -1 : 1;
  }
  return shares;
}
