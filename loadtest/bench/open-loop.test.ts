import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureOpenLoop } from './open-loop.ts';

describe('measureOpenLoop', () => {
  let server: Server;
  let baseUrl: string;
  const arrivals: number[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      arrivals.push(performance.now());
      // /slow answers after 50 ms: its latency must show, not be averaged away.
      const delay = req.url?.startsWith('/slow') ? 50 : 0;
      setTimeout(() => {
        res.statusCode = req.url?.startsWith('/missing') ? 404 : 200;
        res.end('{}');
      }, delay);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('starts requests evenly at the given rate, not in per-second bursts', async () => {
    arrivals.length = 0;
    const result = await measureOpenLoop({
      baseUrl,
      paths: ['/a', '/b'],
      rate: 200,
      duration: 1,
      connections: 10,
    });
    expect(result.requests).toBe(200);
    expect(result.statuses).toEqual({ '200': 200 });
    expect(result.non2xx + result.errors + result.timeouts).toBe(0);
    // 200 per second is one every 5 ms: no 100 ms window may hold more than a fraction of them.
    const busiest = Math.max(...arrivals.map((t) => arrivals.filter((u) => u >= t && u < t + 100).length));
    expect(busiest).toBeLessThanOrEqual(35);
  });

  it('counts failures and times latency from the instant each request was due', async () => {
    const result = await measureOpenLoop({
      baseUrl,
      paths: ['/slow', '/missing'],
      rate: 100,
      duration: 0.5,
      connections: 5,
    });
    expect(result.requests).toBe(50);
    expect(result.statuses).toEqual({ '200': 25, '404': 25 });
    expect(result.non2xx).toBe(25);
    expect(result.p99).toBeGreaterThanOrEqual(50);
  });
});
