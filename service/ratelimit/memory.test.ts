import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_KEYS, MemoryStore } from './memory.ts';
import { manualClock } from './test-app.ts';

const MINUTE = Date.UTC(2030, 0, 1, 12, 0, 0);
const MB = 1024 * 1024;

/** The start address of the i-th IPv6 /64, as the rate-limit key generator writes it. */
const clientKey = (i: number) => `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::`;

function heapUsedAfterGc(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('MemoryStore bounds', () => {
  it('holds at most maxKeys clients, forgetting the first client of the minute first', () => {
    let evictions = 0;
    const store = new MemoryStore({ clock: () => MINUTE, maxKeys: 3, onEvict: () => evictions++ });
    expect([store.hit('a'), store.hit('a'), store.hit('b'), store.hit('c')].map((h) => h.current)).toEqual([
      1, 2, 1, 1,
    ]);
    expect(store.hit('d').current).toBe(1); // a is forgotten
    expect(store.size).toBe(3);
    expect(evictions).toBe(1);
    expect(store.hit('c').current).toBe(2); // c is still counted
    expect(store.hit('a').current).toBe(1); // a starts again, and b (now the oldest) goes
    expect(store.hit('b').current).toBe(1);
    expect(evictions).toBe(3);
  });

  it('stays bounded under 400k distinct clients in one minute and frees them when the minute ends', () => {
    const clock = manualClock(MINUTE + 5_000);
    const store = new MemoryStore({ clock: clock.now });
    const baseline = heapUsedAfterGc();
    const hitClients = (from: number, to: number) => {
      for (let i = from; i < to; i++) store.hit(clientKey(i));
    };

    hitClients(0, 100_000);
    expect(store.size).toBe(100_000);
    const atCap = heapUsedAfterGc() - baseline;
    hitClients(100_000, 200_000);
    const twiceCap = heapUsedAfterGc() - baseline;
    hitClients(200_000, 400_000);
    const fourTimesCap = heapUsedAfterGc() - baseline;

    expect(store.size).toBe(DEFAULT_MAX_KEYS);
    // About 15 MB for 100k IPv6 clients. Past the cap, the Map's deleted slots add a fixed part
    // until it rehashes, and then memory stops growing.
    expect(atCap).toBeLessThan(24 * MB);
    expect(twiceCap).toBeLessThan(32 * MB);
    expect(fourTimesCap).toBeLessThan(twiceCap + 1 * MB);
    // The newest clients are the ones still counted.
    expect(store.hit(clientKey(399_999)).current).toBe(2);
    expect(store.hit(clientKey(0)).current).toBe(1);

    clock.set(MINUTE + 60_000);
    expect(store.hit(clientKey(399_999)).current).toBe(1);
    expect(store.size).toBe(1);
    expect(heapUsedAfterGc() - baseline).toBeLessThan(1 * MB);
  });

  it('rejects a cap that is not a positive integer', () => {
    expect(() => new MemoryStore({ maxKeys: 0 })).toThrow('maxKeys must be a positive integer, got 0');
  });
});
