/**
 * An open-loop load run: requests start at evenly spaced instants (`rate` per second), whatever
 * the server's answers, as k6's constant-arrival-rate executor does. autocannon's `overallRate`
 * releases each second's budget in a burst, so its latencies measure the burst's queue, not the
 * service. Latency is timed from the instant a request was due, so a stalled server or a client
 * short of sockets shows in the numbers instead of hiding them (coordinated omission).
 */
import { Agent, request } from 'node:http';
import type { LoadResult } from './load.ts';

export interface OpenLoopSpec {
  baseUrl: string;
  /** Paths with query strings, sent in order (cycled). */
  paths: readonly string[];
  headers?: Record<string, string>;
  /** Requests started per second. */
  rate: number;
  /** Seconds of the run. */
  duration: number;
  /** Most sockets open at once; requests due beyond it wait for one (and their wait counts). */
  connections: number;
}

export async function measureOpenLoop(spec: OpenLoopSpec): Promise<LoadResult> {
  if (spec.paths.length === 0) throw new Error('a load run needs at least one path');
  const url = new URL(spec.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const total = Math.max(1, Math.round(spec.rate * spec.duration));
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let started = 0;
  const inFlight = new Set<Promise<void>>();
  const began = performance.now();

  const send = (path: string, due: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path,
          method: 'GET',
          headers: spec.headers,
          agent,
          timeout: 10_000,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - due);
            const code = String(res.statusCode);
            statuses[code] = (statuses[code] ?? 0) + 1;
            if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) non2xx++;
            resolve();
          });
        },
      );
      req.on('timeout', () => {
        timeouts++;
        req.destroy();
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });

  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      const dueCount = Math.min(total, Math.floor(((now - began) / 1000) * spec.rate) + 1);
      while (started < dueCount) {
        const due = began + (started * 1000) / spec.rate;
        const path = spec.paths[started % spec.paths.length] as string;
        started++;
        const pending = send(path, due);
        inFlight.add(pending);
        void pending.then(() => inFlight.delete(pending));
      }
      if (started < total) setTimeout(tick, 1);
      else done();
    };
    tick();
  });
  await Promise.all(inFlight);
  const seconds = (performance.now() - began) / 1000;
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0);
  return {
    rps: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    mean: round(latencies.reduce((sum, x) => sum + x, 0) / Math.max(1, latencies.length)),
    requests: latencies.length,
    non2xx,
    errors,
    timeouts,
    statuses,
    seconds,
  };
}

/** Tenths of a millisecond: finer than autocannon's whole milliseconds, which hide sub-ms latencies. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
