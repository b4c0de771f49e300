import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combine, type LoadResult, measure, measureEachInTurns, measureInTurns } from './load.ts';

const run = (over: Partial<LoadResult>): LoadResult => ({
  rps: 1000,
  p50: 1,
  p99: 5,
  mean: 1,
  requests: 1000,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statuses: { '200': 1000 },
  seconds: 1,
  ...over,
});

describe('combine', () => {
  it('adds slices up: req/s over their measured time, worst p99, median p50, summed counts', () => {
    const combined = combine([
      run({ rps: 1000, requests: 2000, seconds: 2.1, p50: 1, p99: 4, statuses: { '200': 2000 } }),
      run({
        rps: 3000,
        requests: 6000,
        seconds: 2.05,
        p50: 3,
        p99: 9,
        non2xx: 2,
        statuses: { '200': 5998, '503': 2 },
      }),
      run({ rps: 2000, requests: 4000, seconds: 2.0, p50: 2, p99: 6, errors: 1, statuses: { '200': 4000 } }),
    ]);
    // 12,000 requests over 2 + 2 + 2 s of measured load.
    expect(combined.rps).toBeCloseTo(2000, 6);
    expect(combined).toMatchObject({
      p50: 2,
      p99: 9,
      requests: 12_000,
      non2xx: 2,
      errors: 1,
      timeouts: 0,
      statuses: { '200': 11_998, '503': 2 },
    });
    expect(combined.seconds).toBeCloseTo(6.15, 6);
  });

  it('reads the percentiles of measured runs from all their requests together', async () => {
    // 2 slow answers among 350: above the p99 of the 50 requests of one run, below the p99 of all.
    const server = createServer((request, response) => {
      if (request.url === '/slow') setTimeout(() => response.end('{}'), 60);
      else response.end('{}');
    });
    const baseUrl = await listen(server);
    try {
      const fast = await measure({ baseUrl, paths: ['/fast'], connections: 1, duration: 1, amount: 300 });
      const paths = ['/slow', '/slow', ...Array.from({ length: 48 }, () => '/fast')];
      const mixed = await measure({ baseUrl, paths, connections: 1, duration: 1, amount: 50 });
      expect(mixed.p99).toBeGreaterThanOrEqual(60);
      const combined = combine([fast, mixed]);
      expect(combined.requests).toBe(350);
      expect(combined.p99).toBeLessThan(60);
      expect(combined.p50).toBeLessThan(60);
      expect(combined.max).toBeGreaterThanOrEqual(60);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses to combine nothing', () => {
    expect(() => combine([])).toThrow('nothing to combine');
  });
});

/** Starts `server` on a free local port; resolves to its base URL. */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('measure', () => {
  let server: Server;
  let baseUrl = '';
  const seen: string[] = [];
  const headers: Array<string | undefined> = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request.url ?? '');
      headers.push(request.headers['x-bench']?.toString());
      response.end('{}');
    });
    baseUrl = await listen(server);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends every path of the list once before any path twice, with the headers, over all connections', async () => {
    const paths = Array.from({ length: 120 }, (_, i) => `/quotes?page=${i + 1}`);
    seen.length = 0;
    headers.length = 0;
    const result = await measure({
      baseUrl,
      paths,
      headers: { 'x-bench': 'yes' },
      connections: 7,
      duration: 1,
      amount: 120,
    });
    expect(result.requests).toBe(120);
    expect(result.non2xx).toBe(0);
    expect([...seen].sort()).toEqual([...paths].sort());
    expect(new Set(headers)).toEqual(new Set(['yes']));
  });

  it('sends the one path of a one-path list on every request', async () => {
    seen.length = 0;
    await measure({ baseUrl, paths: ['/quotes'], connections: 3, duration: 1, amount: 30 });
    expect(seen.length).toBeGreaterThanOrEqual(30);
    expect(new Set(seen)).toEqual(new Set(['/quotes']));
  });
});

describe('measureInTurns', () => {
  const servers: Server[] = [];
  /** Which server accepted each connection, in the order they were accepted. */
  const accepted: string[] = [];
  const start = async (label: string): Promise<string> => {
    const server = createServer((_request, response) => response.end('{}'));
    server.on('connection', () => accepted.push(label));
    servers.push(server);
    return listen(server);
  };
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('swaps which load goes first every turn, over an even number of turns', async () => {
    const [a, b] = [await start('a'), await start('b')];
    const load = { paths: ['/quotes'], connections: 2, duration: 0.4 };
    const [first, second] = await measureInTurns({ baseUrl: a, ...load }, { baseUrl: b, ...load }, 0.1);
    // Four turns of 0.1 s (each lasts until autocannon's next sample tick), each slice on
    // connections of its own: a, b | b, a | a, b | b, a.
    const slices: string[] = [];
    for (let i = 0; i < accepted.length; i += load.connections) slices.push(accepted[i] as string);
    expect(accepted.length).toBe(8 * load.connections);
    expect(slices.join('')).toBe('abbaabba');
    expect(first.requests).toBeGreaterThan(0);
    expect(second.requests).toBeGreaterThan(0);
    expect(first.non2xx + second.non2xx).toBe(0);
  });

  it('measures any number of loads, in their order and then in reverse, turn after turn', async () => {
    accepted.length = 0;
    const [a, b, c] = [await start('a'), await start('b'), await start('c')];
    const load = { paths: ['/quotes'], connections: 2, duration: 0.4 };
    const results = await measureEachInTurns(
      [a, b, c].map((baseUrl) => ({ baseUrl, ...load })),
      0.1,
    );
    const slices: string[] = [];
    for (let i = 0; i < accepted.length; i += load.connections) slices.push(accepted[i] as string);
    expect(slices.join('')).toBe('abccbaabccba');
    expect(results).toHaveLength(3);
    for (const result of results) {
      expect(result.requests).toBeGreaterThan(0);
      expect(result.non2xx).toBe(0);
    }
  });

  it('goes on through the paths of each load from turn to turn, asking none of them twice', async () => {
    const seen: string[] = [];
    const server = createServer((request, response) => {
      seen.push(request.url ?? '');
      response.end('{}');
    });
    const a = await listen(server);
    try {
      // Each slice lasts until autocannon's next 1 s tick: a side sends over 100,000 requests on
      // a fast machine, and a list it went round would ask its paths again.
      const paths = Array.from({ length: 1_000_000 }, (_, i) => `/quotes?page=${i + 1}`);
      const load = { paths, connections: 2, duration: 0.4 };
      const [first, second] = await measureInTurns({ baseUrl: a, ...load }, { baseUrl: a, ...load }, 0.1);
      expect(first.requests).toBeGreaterThan(0);
      expect(Math.max(first.requests, second.requests)).toBeLessThan(paths.length);
      // Each load sends its own paths in order: each path at most twice (once per load), and no
      // load asks a path again after the first slice.
      const counts = new Map<string, number>();
      for (const path of seen) counts.set(path, (counts.get(path) ?? 0) + 1);
      expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
      // A slice ends with up to one request per connection sent but not counted as completed.
      expect(seen.length).toBeGreaterThanOrEqual(first.requests + second.requests);
      expect(seen.length).toBeLessThanOrEqual(first.requests + second.requests + 8 * load.connections);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
