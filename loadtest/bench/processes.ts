/**
 * Child processes of the benchmark: the service, the bare Fastify server, redis-server and the
 * indexer. Every child is registered so that it is killed however the benchmark ends (normal
 * end, exception, Ctrl-C), and memory is read from the kernel rather than from the child itself.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

export { freePort } from '../../service/test-support/processes.ts';

const TAIL_CHARS = 4000;

/** A running child and the last lines it printed (for error messages). */
export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly process: ChildProcess;
  /** Resolves with the exit code (or the signal name) once the child has exited. */
  readonly exited: Promise<number | string>;
  /** The last few thousand characters of stdout and stderr. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<Child>();

/** Kills every child still running, synchronously: for `process.on('exit')`. */
export function killAllNow(): void {
  for (const child of running) {
    try {
      child.process.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
  running.clear();
}

/** Stops every child still running, gracefully. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((c) => c.stop()));
}

/** Starts `command` with `args`; its output is kept (not shown) so that a failure can quote it. */
export function start(name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_CHARS);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    proc.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    proc.once('error', (error) => {
      tail += `\n${error.message}`;
      resolve('spawn error');
    });
  });
  if (proc.pid === undefined) {
    throw new Error(`cannot start ${name} (${command}): is it installed?`);
  }
  let stopping: Promise<void> | undefined;
  const child: Child = {
    name,
    pid: proc.pid,
    process: proc,
    exited,
    output: () => tail,
    stop(graceMs = 3000) {
      stopping ??= (async () => {
        if (proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGTERM');
          const killer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(killer);
        }
        running.delete(child);
      })();
      return stopping;
    },
  };
  running.add(child);
  void exited.then(() => running.delete(child));
  return child;
}

/**
 * Polls `url` until it answers 200. Fails early, with the child's output, if the child exits, and
 * after `timeoutMs` otherwise.
 */
export async function waitForHttp(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: number | string | undefined;
  void child.exited.then((code) => {
    exit = code;
  });
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exit !== undefined) {
      throw new Error(`${child.name} exited (${exit}) before answering ${url}:\n${child.output().trim()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await delay(100);
  }
  throw new Error(
    `${child.name} did not answer ${url} within ${timeoutMs} ms (${last}):\n${child.output().trim()}`,
  );
}

/** Memory of a process in bytes: `rss` now and `peak` (high-water mark) so far. */
export interface Memory {
  rss: number;
  peak: number;
}

/**
 * Reads a process's memory from the kernel: /proc/<pid>/status (VmRSS, VmHWM) on Linux, `ps`
 * elsewhere (where the peak is only the current value). Undefined once the process is gone.
 */
export function memoryOf(pid: number): Memory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    const rss = kb('VmRSS') * 1024;
    const peak = kb('VmHWM') * 1024;
    if (Number.isFinite(rss) && Number.isFinite(peak)) return { rss, peak };
  } catch {
    // Not Linux, or the process has exited: fall through to ps.
  }
  const ps = spawnSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' });
  const kb = Number(ps.stdout?.trim());
  return ps.status === 0 && Number.isFinite(kb) && kb > 0 ? { rss: kb * 1024, peak: kb * 1024 } : undefined;
}

/**
 * CPU time a process has used so far (user + system), in seconds, from /proc/<pid>/stat;
 * undefined where there is no /proc (not Linux) or once the process is gone.
 */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 here; in clock ticks, which
    // are 100 per second on every Linux the benchmark is meant for (USER_HZ).
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Tracks the peak memory of a running process by polling: the kernel's high-water mark where it
 * has one, else the largest RSS seen.
 */
export function watchMemory(pid: number, intervalMs = 100): { peak(): number | undefined; stop(): void } {
  let peak: number | undefined;
  const sample = () => {
    const m = memoryOf(pid);
    if (m !== undefined) peak = Math.max(peak ?? 0, m.peak);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    peak() {
      sample();
      return peak;
    },
    stop: () => clearInterval(timer),
  };
}

/** Whether GNU time (which reports a child's peak RSS exactly, after it exits) is installed. */
function gnuTime(): string | undefined {
  const path = '/usr/bin/time';
  const probe = spawnSync(path, ['-f', '%M', 'true'], { encoding: 'utf8' });
  return probe.status === 0 && /^\d+\s*$/.test(probe.stderr) ? path : undefined;
}

/** Outcome of a command run to completion. */
export interface Completed {
  code: number | string;
  seconds: number;
  /** Peak RSS of the command in bytes; undefined when it could not be measured here. */
  peakRssBytes: number | undefined;
  output: string;
}

/**
 * Runs a command to completion, measuring wall time and peak RSS: through GNU time when present
 * (exact), else by polling the kernel's high-water mark while it runs.
 */
export async function runMeasured(
  name: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Completed> {
  const time = gnuTime();
  const began = performance.now();
  if (time !== undefined) {
    const marker = '__bench_peak_kb=';
    const child = start(name, time, ['-f', `${marker}%M`, command, ...args], env);
    const code = await child.exited;
    const seconds = (performance.now() - began) / 1000;
    const output = child.output();
    const kb = Number(new RegExp(`${marker}(\\d+)`).exec(output)?.[1]);
    // GNU time reports "Command exited with non-zero status N" itself; keep only the command's output.
    const clean = output.replace(
      new RegExp(`(Command exited with non-zero status \\d+\\n)?${marker}\\d+\\n?`),
      '',
    );
    return { code, seconds, peakRssBytes: Number.isFinite(kb) ? kb * 1024 : undefined, output: clean };
  }
  const child = start(name, command, args, env);
  const watch = watchMemory(child.pid, 20);
  const code = await child.exited;
  watch.stop();
  return {
    code,
    seconds: (performance.now() - began) / 1000,
    peakRssBytes: watch.peak(),
    output: child.output(),
  };
}

/**
 * The V8 flags the service runs with (`npm start`, the container image): a 4 MB young generation
 * keeps the resident memory of a busy service near its live data (a request's garbage dies young,
 * and V8 otherwise grows the young generation to tens of MB per semi-space). Measured with
 * `npm run bench`: peak RSS 388 MB → 218 MB at 200k quotes, with no loss of throughput.
 * Fewer V8 helper threads (`--v8-pool-size=1`) shorten the GC's stalls under the mix but raise
 * the peak RSS by 20 to 50 MB, so the pool keeps V8's default (docs/benchmarks.md#history, feba5a8).
 *
 * No allocation-site pretenuring: V8 allocates an object straight in the old generation when most
 * objects from the same place in the code were still alive at recent young-generation
 * collections. Requests that wait for their count from Redis are alive at nearly every
 * collection, so a Redis-store service put under load as soon as it is ready (a new replica, a
 * restart) could settle for good into allocating every request's objects there: each minor
 * collection then took about 0.75 ms instead of 0.2, a full collection ran every half second,
 * and the service did 10 to 35% fewer requests per second (docs/benchmarks.md#history, 0c1a501). Without
 * it, requests die young, as with the memory store, whose throughput it does not change.
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=4', '--no-allocation-site-pretenuring'] as const;

/**
 * The V8 flags of the service in front of Meilisearch (the Compose stack's `service`): a 16 MB
 * young generation. Its requests wait on the engine across several minor collections, so with
 * 4 MB each collection copied the in-flight requests again: in the uncached mix at 1M the service
 * spent 0.55 to 0.56 ms of CPU per answer in three runs with 4 MB (0.30 to 0.31 of the engine's
 * CPU per answer), 0.45 to 0.58 ms in five with 16 MB (0.27 to 0.29 of the engine's). It holds
 * no catalogue, so the larger young generation costs no memory that matters.
 */
export const MEILI_SERVICE_NODE_FLAGS = [
  '--max-semi-space-size=16',
  '--no-allocation-site-pretenuring',
] as const;

/**
 * The V8 flags of `npm run index`. The indexer allocates fast and briefly (parsed records, a few
 * MB live), and V8 left alone lets garbage pile up: peak RSS for a million quotes varied from
 * 250 to 340 MB between runs, and reached 333 MB with a 16 MB young generation and a 224 MB old
 * one. A 4 MB young generation and a 128 MB old one keep it under 300 MB on either engine (the
 * indexer waits on the engine far longer than it collects garbage); the live heap stays far below the cap (the validator's maps hold one entry per author and per work), so only a
 * catalogue of millions of distinct works would need more (NODE_OPTIONS=--max-old-space-size=…).
 */
export const INDEXER_NODE_FLAGS = ['--max-semi-space-size=4', '--max-old-space-size=128'] as const;

/**
 * The environment of `npm run index` beside its flags: glibc gives each thread that allocates
 * (V8's garbage-collection helpers, libuv's pool) its own arena, and pages freed in one arena are
 * not reused by another. Two arenas cut the indexer's peak RSS at a million quotes by about 20 MB.
 */
export const INDEXER_ENV = { MALLOC_ARENA_MAX: '2' } as const;
