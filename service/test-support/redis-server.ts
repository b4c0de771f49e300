/**
 * Test support: a real `redis-server` child process on a free port, in a temporary directory,
 * with persistence off. It installs nothing: the binary must be on PATH (or named by
 * REDIS_SERVER_BIN); `.ci/run` installs it when missing. Tests can crash it (SIGKILL), freeze it
 * (SIGSTOP) and start it again on the same port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.ts';

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Whether the process runs (paused counts as running). */
  readonly running: boolean;
  /** Starts the server again on the same port (after {@link stop}); resolves once it accepts commands. */
  start(): Promise<void>;
  /** Kills the server with SIGKILL, like a crash; resolves once the process is gone. */
  stop(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open and nothing answers. */
  pause(): void;
  /** Undoes {@link pause}. */
  resume(): void;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

/** Starts a `redis-server` on a free port of 127.0.0.1. Fails with a clear message if the binary is missing. */
export async function startRedisServer(): Promise<RedisServer> {
  const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const dir = await mkdtemp(join(tmpdir(), 'quotes-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let paused = false;

  const start = async (): Promise<void> => {
    if (child !== undefined) throw new Error('redis-server is already running');
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
    ];
    const proc = spawn(binary, [...args, '--daemonize', 'no', '--logfile', ''], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const output: string[] = [];
    // Always drain the pipes: a full pipe would block the server.
    proc.stdout?.on('data', (chunk: Buffer) => keepTail(output, chunk));
    proc.stderr?.on('data', (chunk: Buffer) => keepTail(output, chunk));
    proc.once('exit', () => {
      if (child === proc) child = undefined;
    });
    try {
      await waitUntilReady(proc, port, output, binary);
    } catch (error) {
      proc.kill('SIGKILL');
      child = undefined;
      throw error;
    }
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (proc === undefined) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await exited;
    paused = false;
  };

  await start().catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined;
    },
    start,
    stop,
    pause() {
      if (child === undefined || paused) return;
      child.kill('SIGSTOP');
      paused = true;
    },
    resume() {
      if (child === undefined || !paused) return;
      child.kill('SIGCONT');
      paused = false;
    },
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function keepTail(lines: string[], chunk: Buffer): void {
  lines.push(chunk.toString('utf8'));
  if (lines.length > 20) lines.shift();
}

/** Resolves when the server answers PING; rejects when it exits or does not answer in time. */
async function waitUntilReady(
  proc: ChildProcess,
  port: number,
  output: string[],
  binary: string,
): Promise<void> {
  let exitReason: string | undefined;
  const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
    exitReason = `exited with ${signal ?? `code ${code}`}`;
  };
  const onError = (error: NodeJS.ErrnoException) => {
    exitReason =
      error.code === 'ENOENT'
        ? `'${binary}' was not found on PATH: install Redis (apt-get install -y redis-server) or set REDIS_SERVER_BIN`
        : error.message;
  };
  proc.once('exit', onExit);
  proc.once('error', onError);
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (exitReason !== undefined) break;
      if (await answersPing(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const why = exitReason ?? `did not answer within ${START_TIMEOUT_MS} ms`;
    throw new Error(`redis-server on port ${port} ${why}\n${output.join('')}`);
  } finally {
    proc.off('exit', onExit);
    proc.off('error', onError);
  }
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}
