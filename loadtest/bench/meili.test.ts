import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateQuotes } from '../../indexer/generate.ts';
import type { LoadResult } from './load.ts';
import { encodeBatches, startRecorder } from './meili.ts';
import { evaluateMeili, type MeiliResults, meiliFailures, meiliTable } from './meili-report.ts';

describe('startRecorder', () => {
  it('forwards each request with its body and keeps the query requests, not the probes', async () => {
    const upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, url: req.url, body, auth: req.headers.authorization }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const recorder = await startRecorder(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
    try {
      const answer = await fetch(`${recorder.url}/indexes/quotes/documents/fetch`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: '{"limit":1}',
      });
      expect(answer.status).toBe(201);
      expect(await answer.json()).toEqual({
        method: 'POST',
        url: '/indexes/quotes/documents/fetch',
        body: '{"limit":1}',
        auth: 'Bearer k',
      });
      expect((await fetch(`${recorder.url}/health`)).status).toBe(201);
      expect(recorder.requests).toEqual([
        {
          method: 'POST',
          path: '/indexes/quotes/documents/fetch',
          headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
          body: '{"limit":1}',
        },
      ]);
    } finally {
      await recorder.close();
      upstream.close();
    }
  });
});

describe('encodeBatches', () => {
  it('writes every document once and releases the catalogue file when done', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-batches-'));
    try {
      const file = join(dir, 'quotes.ndjson');
      const quotes = [...generateQuotes(300, 3)];
      writeFileSync(file, `${quotes.map((q) => JSON.stringify(q)).join('\n')}\n`);
      // The files this process holds open, by the path each descriptor names.
      const openFiles = () =>
        readdirSync('/proc/self/fd').map((fd) => {
          try {
            return readlinkSync(join('/proc/self/fd', fd));
          } catch {
            return '';
          }
        });
      const { count, files } = await encodeBatches(file, dir);
      expect(count).toBe(300);
      expect(files).toHaveLength(1);
      // Nothing left for the garbage collector to close.
      expect(openFiles()).not.toContain(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('cuts batches where the indexer does: at its document count or before its byte limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-batches-'));
    try {
      const file = join(dir, 'quotes.ndjson');
      const quotes = [...generateQuotes(300, 3)];
      writeFileSync(file, `${quotes.map((q) => JSON.stringify(q)).join('\n')}\n`);
      const { files } = await encodeBatches(file, dir, { documents: 10, bytes: 20_000 });
      const bodies = files.map((f) => readFileSync(f, 'utf8'));
      for (const body of bodies) {
        expect(Buffer.byteLength(body)).toBeLessThanOrEqual(20_000);
        expect(body.split('\n').length).toBeLessThanOrEqual(10);
      }
      // Both limits cut: some batches are full by count, some by bytes.
      expect(bodies.some((b) => b.split('\n').length === 10)).toBe(true);
      expect(bodies.slice(0, -1).some((b) => b.split('\n').length < 10)).toBe(true);
      const ids = bodies.flatMap((b) => b.split('\n').map((line) => (JSON.parse(line) as { id: number }).id));
      expect(ids).toEqual(quotes.map((q) => q.id));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function load(p99: number, statuses: Record<string, number>, rps = 100): LoadResult {
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    rps,
    p50: 1,
    p99,
    mean: 1,
    requests,
    non2xx: requests - (statuses['200'] ?? 0),
    errors: 0,
    timeouts: 0,
    statuses,
    seconds: 1,
  };
}

function results(overrides: Partial<MeiliResults> = {}): MeiliResults {
  return {
    engine: {
      version: 'meilisearch 1.50.0',
      rssAfterIndexingBytes: 200e6,
      peakRssBytes: 600e6,
      deepPeakRssBytes: 250e6,
    },
    catalogue: { count: 1000, bytes: 1e6 },
    indexing: { seconds: 11, peakRssBytes: 150e6 },
    directIngestionSeconds: 10,
    totalQuotes: 1000,
    mix: load(40, { '200': 900 }, 450),
    replay: load(10, { '200': 1000 }, 1000),
    requestsPerAnswer: 2,
    pages: { 'last page, sort=id': { ...load(120, { '200': 100 }), path: '/quotes?page=50' } },
    random: load(20, { '200': 500 }),
    pastTheEnd: { ...load(5, { '404': 100 }), path: '/quotes?page=51' },
    burst: load(900, { '200': 36, '404': 12, '503': 2 }),
    inARow: { ...load(250, { '200': 54, '404': 18 }), max: 280 },
    ...overrides,
  };
}

describe('evaluateMeili', () => {
  it('compares the service with the replay in answers per second, and passes a run within every target', () => {
    const targets = evaluateMeili(results(), 1000);
    // 1000 engine requests/s at 2 per answer is 500 answers/s; the service did 450.
    expect(targets.find((t) => t.name === 'uncached mix: service / direct replay')?.value).toBeCloseTo(
      0.9,
      10,
    );
    expect(targets.find((t) => t.name === 'indexing: indexer / engine ingestion')?.value).toBeCloseTo(
      1.1,
      10,
    );
    expect(targets.filter((t) => t.pass !== true)).toEqual([]);
    expect(meiliFailures(results())).toEqual([]);
  });

  it('puts the bare forwarder beside the replay, in answers per second, and counts its failures', () => {
    const measured = results({ forwarder: load(10, { '200': 1000 }, 960) });
    const table = meiliTable({
      machine: {
        date: 'today',
        cpuCount: 2,
        cpuModel: 'cpu',
        node: 'v24',
        memoryBytes: 1e9,
        platform: 'linux',
      },
      config: {
        backend: 'meilisearch',
        count: 1000,
        seed: 1,
        duration: 10,
        connections: 50,
        quick: false,
        mixPaths: 1000,
        idPaths: 0,
      },
      results: measured,
      targets: evaluateMeili(measured, 1000),
      failures: [],
    });
    // 960 engine requests/s at 2 per answer: 480 answers/s, 0.96 of the replay's 500; the
    // service's 450 is 0.94 of it.
    expect(table).toContain('= 480 answers/s; 0.96 of the replay, the service 0.94 of it |');
    expect(meiliFailures(results({ forwarder: load(10, { '200': 90, '502': 10 }) }))).toEqual([
      'bare forwarder: 10 requests not 200 ({"200":90,"502":10}, 0 errors)',
    ]);
  });

  it('fails a deep page answered 503, a past-the-end page answered 200 and a wrong total', () => {
    const bad = results({
      pages: { 'last page, sort=id': { ...load(120, { '200': 90, '503': 10 }), path: '/quotes?page=50' } },
      pastTheEnd: { ...load(5, { '200': 100 }), path: '/quotes?page=51' },
      totalQuotes: 999,
      burst: load(2500, { '200': 50 }),
    });
    const failed = evaluateMeili(bad, 1000)
      .filter((t) => t.pass === false)
      .map((t) => t.name);
    expect(failed).toEqual([
      'last page, sort=id: p99 (ms), all 200',
      'past the last page: p99 (ms), all 404',
      '50 deep pages at once: p99 (ms), each 200, 404 or 503',
      'total_quotes with no filter',
    ]);
    expect(meiliFailures(bad)).toHaveLength(2);
  });
});
