/**
 * Vitest global setup: finds out once per run whether a container runtime (a Docker engine) is
 * reachable, and provides the answer to the suites that need one (`inject('containerRuntime')`).
 * Those suites skip loudly, with this reason, when none is.
 *
 * The suites also work without this setup registered: {@link containerRuntime} probes by itself
 * when nothing was provided.
 *
 * An engine is not enough: it may reach no image registry. {@link missingImages} tells a suite
 * which of the images it needs are neither present nor pullable, so that it skips naming them
 * instead of failing on a pull; {@link ensureReaper} turns testcontainers' reaper (Ryuk, another
 * image) off where its image cannot be had.
 */
import { request } from 'node:http';
import * as zlib from 'node:zlib';
import type { TestProject } from 'vitest/node';

/** Whether testcontainers can start containers here, and why not. */
export interface ContainerRuntime {
  available: boolean;
  /** Runtime description when available; the failure when not. */
  reason: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    containerRuntime: ContainerRuntime;
  }
}

/** Whether something answers Docker's ping on the usual socket (or DOCKER_HOST's unix socket). */
function pingDockerSocket(): Promise<boolean> {
  const host = process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
  if (!host.startsWith('unix://')) return Promise.resolve(false);
  return new Promise((done) => {
    const req = request(
      { socketPath: host.slice('unix://'.length), path: '/_ping', timeout: 2_000 },
      (res) => {
        res.resume();
        done(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(false));
    req.end();
  });
}

/**
 * Why testcontainers cannot load on this Node, if it cannot: its HTTP client (undici) needs zstd
 * in node:zlib, which came with Node 22.15; without it, loading fails with "Cannot read properties
 * of undefined (reading 'bind')", which says nothing about the engine.
 */
export function testcontainersUnusable(zlibModule: object, nodeVersion: string): string | undefined {
  if (typeof (zlibModule as { createZstdDecompress?: unknown }).createZstdDecompress === 'function')
    return undefined;
  return `testcontainers cannot run on Node ${nodeVersion} (it needs Node 22.15 or later): run the tests with the project's Node (npm test)`;
}

let probe: Promise<ContainerRuntime> | undefined;

/** Asks testcontainers for a runtime; memoised, never throws. */
export function probeContainerRuntime(): Promise<ContainerRuntime> {
  probe ??= (async () => {
    const unusable = testcontainersUnusable(zlib, process.version);
    if (unusable !== undefined) {
      const engine = (await pingDockerSocket()) ? 'a Docker engine answers, but ' : '';
      return { available: false, reason: `${engine}${unusable}` };
    }
    try {
      const { getContainerRuntimeClient } = await import('testcontainers');
      const client = await getContainerRuntimeClient();
      return {
        available: true,
        reason: `${client.info.containerRuntime.host} (${client.info.node.version})`,
      };
    } catch (error) {
      return { available: false, reason: error instanceof Error ? error.message : String(error) };
    }
  })();
  return probe;
}

/**
 * The runtime as the global setup found it, or a fresh probe when the setup is not registered.
 * `provided` is `inject('containerRuntime')` (undefined without the setup).
 */
export async function containerRuntime(provided: ContainerRuntime | undefined): Promise<ContainerRuntime> {
  return provided ?? (await probeContainerRuntime());
}

/** An image a suite needs that is neither present nor pullable, and why it could not be pulled. */
export interface MissingImage {
  image: string;
  reason: string;
}

const images = new Map<string, Promise<MissingImage | undefined>>();

/**
 * Which of `wanted` the engine lacks and cannot pull (none can be pulled without a registry).
 * Present images are used as they are, so local stand-ins with the same tags count. Memoised per
 * image; a pull is tried at most once per process. Never throws: without a runtime, every image
 * is missing with the runtime's reason.
 */
export async function missingImages(wanted: readonly string[]): Promise<MissingImage[]> {
  const found = await Promise.all(
    [...new Set(wanted)].map((image) => {
      let check = images.get(image);
      if (check === undefined) {
        check = checkImage(image);
        images.set(image, check);
      }
      return check;
    }),
  );
  return found.filter((m): m is MissingImage => m !== undefined);
}

async function checkImage(image: string): Promise<MissingImage | undefined> {
  const runtime = await probeContainerRuntime();
  if (!runtime.available) return { image, reason: runtime.reason };
  try {
    const { getContainerRuntimeClient, ImageName } = await import('testcontainers');
    const client = await getContainerRuntimeClient();
    const name = ImageName.fromString(image);
    if (await client.image.exists(name)) return undefined;
    await client.image.pull(name);
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { image, reason: `not present, and the pull failed: ${message.split('\n')[0]}` };
  }
}

/** One line for a skip message: `image (reason); image (reason)`. */
export function describeMissing(missing: readonly MissingImage[]): string {
  return missing.map((m) => `${m.image} (${m.reason})`).join('; ');
}

/** The reaper image testcontainers 12 starts beside the first container (RYUK_CONTAINER_IMAGE overrides it). */
export function reaperImage(): string {
  return process.env.RYUK_CONTAINER_IMAGE || 'testcontainers/ryuk:0.14.0';
}

/**
 * Makes testcontainers start without its reaper when the reaper's image cannot be had (set
 * TESTCONTAINERS_RYUK_DISABLED=true before the first container starts). The suites stop their
 * containers themselves; the reaper only cleans up after a crashed run. Returns what it did.
 */
export async function ensureReaper(): Promise<string> {
  if (process.env.TESTCONTAINERS_RYUK_DISABLED === 'true')
    return 'reaper disabled (TESTCONTAINERS_RYUK_DISABLED)';
  const [missing] = await missingImages([reaperImage()]);
  if (missing === undefined) return `reaper ${reaperImage()}`;
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  return `reaper disabled: ${describeMissing([missing])}`;
}

export default async function setup(project: TestProject): Promise<void> {
  const runtime = await probeContainerRuntime();
  if (!runtime.available) {
    console.warn(`[containers] no container runtime: suites that need Docker will skip (${runtime.reason})`);
  } else {
    // Decided here too, so that the test workers, which start with this process's environment,
    // begin with the reaper off where its image cannot be had.
    const reaper = await ensureReaper();
    if (process.env.TESTCONTAINERS_RYUK_DISABLED === 'true') console.warn(`[containers] ${reaper}`);
  }
  project.provide('containerRuntime', runtime);
}
