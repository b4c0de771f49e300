/**
 * Vitest global setup: finds out once per run whether a container runtime (a Docker engine) is
 * reachable, and provides the answer to the suites that need one (`inject('containerRuntime')`).
 * Those suites skip loudly, with this reason, when none is.
 *
 * The suites also work without this setup registered: {@link containerRuntime} probes by itself
 * when nothing was provided.
 */
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

let probe: Promise<ContainerRuntime> | undefined;

/** Asks testcontainers for a runtime; memoised, never throws. */
export function probeContainerRuntime(): Promise<ContainerRuntime> {
  probe ??= (async () => {
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

export default async function setup(project: TestProject): Promise<void> {
  const runtime = await probeContainerRuntime();
  if (!runtime.available) {
    console.warn(`[containers] no container runtime: suites that need Docker will SKIP (${runtime.reason})`);
  }
  project.provide('containerRuntime', runtime);
}
