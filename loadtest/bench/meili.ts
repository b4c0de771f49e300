/**
 * The Meilisearch side of the benchmark: a fresh engine of its own, the engine's own ingestion of
 * the indexer's documents (the baseline the indexer is compared with), and a recording proxy that
 * keeps the requests the service sends, so that they can be replayed straight at the engine.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { openRecords } from '../../indexer/read.ts';
import { Validator } from '../../indexer/validate.ts';
import {
  batchEndsBefore,
  batchIsFull,
  DEFAULT_BATCH_SIZE,
  MAX_BATCH_BYTES,
} from '../../service/catalogue/meilisearch/builder.ts';
import { createDocumentEncoder, MEILI_SETTINGS } from '../../service/catalogue/meilisearch/request.ts';
import type { RequestSpec } from './load.ts';
import { type Child, freePort, start, waitForHttp } from './processes.ts';

/** `meilisearch --version`, e.g. `meilisearch 1.50.0`; undefined when it does not run. */
export function meiliVersion(binary: string): string | undefined {
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
}

export interface Engine {
  child: Child;
  url: string;
  masterKey: string;
}

/**
 * Starts the engine on a free loopback port with its database in `dbDir`, with `masterKey` (a
 * kept database's) or a new one.
 */
export async function startMeili(
  binary: string,
  dbDir: string,
  env: NodeJS.ProcessEnv,
  masterKey = randomBytes(24).toString('hex'),
): Promise<Engine> {
  const port = await freePort();
  // Generated per run (or per kept database) and never printed: production mode demands one.
  const child = start(
    'meilisearch',
    binary,
    [
      '--db-path',
      dbDir,
      '--http-addr',
      `127.0.0.1:${port}`,
      '--master-key',
      masterKey,
      '--env',
      'production',
      '--no-analytics',
    ],
    env,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(child, `${url}/health`);
  return { child, url, masterKey };
}

async function call(engine: { url: string; key: string }, method: string, path: string, body?: unknown) {
  const res = await fetch(`${engine.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${engine.key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Waits for an engine task; throws unless it succeeded. */
export async function waitTask(engine: { url: string; key: string }, taskUid: number): Promise<void> {
  for (;;) {
    const task = await call(engine, 'GET', `/tasks/${taskUid}`);
    if (task.status === 'succeeded') return;
    if (task.status === 'failed' || task.status === 'canceled') {
      throw new Error(`task ${taskUid} ${String(task.status)}: ${JSON.stringify(task.error)}`);
    }
    await delay(50);
  }
}

/**
 * Writes the documents the indexer would send for `file` as NDJSON batches of the indexer's size,
 * ahead of the timed part: the baseline times the engine, not the reading.
 */
export async function encodeBatches(
  file: string,
  dir: string,
  limits = { documents: DEFAULT_BATCH_SIZE, bytes: MAX_BATCH_BYTES },
): Promise<{ files: string[]; count: number }> {
  const encode = createDocumentEncoder('bench');
  const validator = new Validator({ maxProblems: 1 });
  const source = await openRecords(file);
  const files: string[] = [];
  let count = 0;
  let out: ReturnType<typeof createWriteStream> | undefined;
  let inBatch = 0;
  let inBytes = 0;
  const close = async () => {
    if (out === undefined) return;
    const stream = out;
    out = undefined;
    await new Promise<void>((resolve, reject) =>
      stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
  };
  try {
    for await (const chunk of source.batches()) {
      for (const raw of chunk) {
        const quote = raw.error === undefined ? validator.check(raw.value, raw.record, raw.line) : null;
        if (quote === null) throw new Error(`${file}: record ${raw.record} is not valid`);
        const line = JSON.stringify(encode(quote));
        const size = Buffer.byteLength(line);
        // The indexer's own cut: a batch ends at its document count or before its byte limit.
        if (batchEndsBefore(inBatch, inBytes, size, limits.bytes)) await close();
        if (out === undefined) {
          const name = join(dir, `batch-${files.length}.ndjson`);
          files.push(name);
          out = createWriteStream(name);
          inBatch = 0;
          inBytes = 0;
        }
        const stream = out;
        if (!stream.write(inBatch === 0 ? line : `\n${line}`)) {
          await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
        }
        inBytes += (inBatch === 0 ? 0 : 1) + size;
        count++;
        if (batchIsFull(++inBatch, limits.documents)) await close();
      }
    }
    await close();
  } finally {
    // The file is released here, not by the garbage collector (which warns, and will throw).
    await source.close();
  }
  return { files, count };
}

/**
 * The engine's own ingestion of `batches` into a new index `uid` with the catalogue's settings:
 * settings first, then every batch posted with two tasks in flight, as the indexer does. Seconds.
 */
export async function ingestDirect(
  engine: { url: string; key: string },
  uid: string,
  batches: readonly string[],
): Promise<number> {
  const began = performance.now();
  await waitTask(
    engine,
    (await call(engine, 'POST', '/indexes', { uid, primaryKey: 'id' })).taskUid as number,
  );
  await waitTask(
    engine,
    (await call(engine, 'PATCH', `/indexes/${uid}/settings`, MEILI_SETTINGS)).taskUid as number,
  );
  const inFlight: number[] = [];
  for (const file of batches) {
    const res = await fetch(`${engine.url}/indexes/${uid}/documents?primaryKey=id`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${engine.key}`, 'Content-Type': 'application/x-ndjson' },
      body: readFileSync(file),
    });
    const task = (await res.json()) as { taskUid?: number };
    if (!res.ok || task.taskUid === undefined) throw new Error(`posting ${file} answered ${res.status}`);
    inFlight.push(task.taskUid);
    if (inFlight.length >= 2) await waitTask(engine, inFlight.shift() as number);
  }
  for (const taskUid of inFlight) await waitTask(engine, taskUid);
  return (performance.now() - began) / 1000;
}

/** Engine paths that are not a query: health and readiness probes, left out of a replay. */
const NOT_A_QUERY = /^\/(health|version|stats|tasks|keys)\b/;

export interface Recorder {
  url: string;
  /** The query requests received so far, in arrival order. */
  readonly requests: RequestSpec[];
  close(): Promise<void>;
}

/** An HTTP proxy to `target` that keeps every query request it forwards, with its body. */
export async function startRecorder(target: string): Promise<Recorder> {
  const upstream = new URL(target);
  const requests: RequestSpec[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      if (!NOT_A_QUERY.test(path)) {
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type']) {
          const value = req.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        requests.push({
          method: req.method ?? 'GET',
          path,
          headers,
          body: body.length > 0 ? body.toString('utf8') : undefined,
        });
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
