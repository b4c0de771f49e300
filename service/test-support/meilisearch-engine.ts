/**
 * The one way every Meilisearch suite finds a real engine, in this order:
 *
 * 1. `MEILI_BIN`, or a `meilisearch` on `PATH`: started by the suite on a free loopback port with
 *    a temporary database and a generated master key (production mode, no analytics), stopped
 *    and removed on teardown;
 * 2. `MEILI_URL` (+ `MEILI_MASTER_KEY`): an engine already running, shared (suites use their own
 *    index and key names there and delete them);
 * 3. a container of {@link MEILI_IMAGE}, when a Docker engine is reachable;
 * 4. none: the suite skips, printing what to install or set.
 *
 * Each suite prints one line saying which engine (and version) it ran on, or why it skipped, so a
 * run that proved nothing about Meilisearch is visible as such.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type ContainerRuntime, containerRuntime, describeMissing, missingImages } from './containers.ts';
import { freePort } from './processes.ts';
import { USING_TAG } from './suites.ts';

/** The Meilisearch suites import it from here, beside the engine they skip without. */
export { announceSkip } from './suites.ts';

/** The image a container engine runs: the one the compose file names, so a suite and the stack share it. */
export const MEILI_IMAGE = 'getmeili/meilisearch:v1.53';

/** Longest wait for a started engine to answer `/health`. */
const START_TIMEOUT_MS = 60_000;

/** A running engine a suite may use with its master key. */
export interface MeiliEngine {
  host: string;
  masterKey: string;
  /** Where it runs, e.g. `binary /opt/meilisearch`, `MEILI_URL http://...`, `container ...`. */
  origin: string;
  /** The version the engine reports (`GET /version`), e.g. `1.50.0`. */
  version: string;
  /** Stops what the helper started (nothing for `MEILI_URL`) and removes its data. */
  stop(): Promise<void>;
}

/** How a suite will get its engine, decided at collection time so that a skip is visible. */
export type MeiliEngineSource =
  | { kind: string; start(suite: string): Promise<MeiliEngine> }
  | { skip: string };

/** `MEILI_BIN`, else the first executable `meilisearch` on `PATH`, else undefined. */
export function findMeiliBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.MEILI_BIN;
  if (explicit !== undefined && explicit !== '') return explicit;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'meilisearch');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Where the suites find an engine. `provided` is `inject('containerRuntime')` from the global
 * setup (undefined without it).
 */
export async function meiliEngineSource(provided?: ContainerRuntime): Promise<MeiliEngineSource> {
  const binary = findMeiliBinary();
  if (binary !== undefined) return { kind: 'binary', start: (suite) => startBinary(binary, suite) };
  const url = process.env.MEILI_URL;
  if (url !== undefined && url !== '') {
    const masterKey = process.env.MEILI_MASTER_KEY ?? '';
    return {
      kind: 'MEILI_URL',
      start: async (suite) =>
        announce(suite, { host: url, masterKey, origin: `MEILI_URL ${url}`, stop: async () => {} }),
    };
  }
  const runtime = await containerRuntime(provided);
  if (!runtime.available) {
    return {
      skip:
        'no Meilisearch engine: install a `meilisearch` binary on PATH (or set MEILI_BIN), set MEILI_URL ' +
        `(and MEILI_MASTER_KEY), or make a Docker engine reachable (${runtime.reason})`,
    };
  }
  const missing = await missingImages([MEILI_IMAGE]);
  if (missing.length > 0) {
    return {
      skip:
        'no Meilisearch engine: install a `meilisearch` binary on PATH (or set MEILI_BIN), set MEILI_URL ' +
        `(and MEILI_MASTER_KEY), or let the Docker engine get ${describeMissing(missing)}`,
    };
  }
  return { kind: 'container', start: (suite) => startContainer(suite) };
}

async function announce(suite: string, engine: Omit<MeiliEngine, 'version'>): Promise<MeiliEngine> {
  let version: string;
  try {
    version = await engineVersion(engine.host, engine.masterKey);
  } catch (error) {
    await engine.stop();
    throw error;
  }
  console.warn(`${USING_TAG} ${suite}: Meilisearch v${version} (${engine.origin})`);
  return { ...engine, version };
}

async function engineVersion(host: string, masterKey: string): Promise<string> {
  const response = await fetch(new URL('/version', host), {
    headers: masterKey === '' ? {} : { authorization: `Bearer ${masterKey}` },
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { pkgVersion?: unknown };
  if (!response.ok || typeof body.pkgVersion !== 'string') {
    throw new Error(`Meilisearch at ${host} did not report its version (HTTP ${response.status})`);
  }
  return body.pkgVersion;
}

async function startBinary(binary: string, suite: string): Promise<MeiliEngine> {
  // Another process may take the port between the probe and the bind: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await announce(suite, await spawnEngine(binary));
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function spawnEngine(binary: string): Promise<Omit<MeiliEngine, 'version'>> {
  const dir = mkdtempSync(join(tmpdir(), 'quotes-meili-'));
  const port = await freePort();
  const masterKey = randomBytes(24).toString('hex');
  // The engine reads MEILI_* variables as options: none of the suite's may leak into it.
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('MEILI_')) env[name] = value;
  env.MEILI_LOG_LEVEL = 'WARN';
  const child = spawn(
    binary,
    [
      '--http-addr',
      `127.0.0.1:${port}`,
      '--db-path',
      join(dir, 'data.ms'),
      '--dump-dir',
      join(dir, 'dumps'),
      '--snapshot-dir',
      join(dir, 'snapshots'),
      '--master-key',
      masterKey,
      '--env',
      'production',
      '--no-analytics',
    ],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const host = `http://127.0.0.1:${port}`;
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const stop = async () => {
    await stopChild(child);
    remove();
  };
  try {
    await waitHealthy(host, child, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }
  return { host, masterKey, origin: `binary ${binary}`, stop };
}

async function waitHealthy(host: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `meilisearch exited (${child.exitCode ?? child.signalCode}) before answering: ${stderr()}`,
      );
    }
    try {
      const response = await fetch(new URL('/health', host), { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`meilisearch did not answer /health within ${START_TIMEOUT_MS} ms: ${stderr()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function startContainer(suite: string): Promise<MeiliEngine> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const masterKey = randomBytes(24).toString('hex');
  const container = await new GenericContainer(MEILI_IMAGE)
    .withExposedPorts(7700)
    .withEnvironment({ MEILI_MASTER_KEY: masterKey, MEILI_NO_ANALYTICS: 'true', MEILI_ENV: 'production' })
    .withWaitStrategy(Wait.forHttp('/health', 7700).forStatusCode(200))
    .start();
  return announce(suite, {
    host: `http://${container.getHost()}:${container.getMappedPort(7700)}`,
    masterKey,
    origin: `container ${MEILI_IMAGE}`,
    stop: async () => {
      await container.stop();
    },
  });
}
