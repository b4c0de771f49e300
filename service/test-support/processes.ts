/**
 * Child processes and ports for the suites that run the project's programs (the service, the
 * indexer, the benchmark, docker) as a user would.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** How a program ended: its exit code (null when a signal ended it) and everything it printed. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /** The whole environment of the child; the parent's when absent. */
  env?: NodeJS.ProcessEnv;
  /** Past it the child is killed (SIGKILL) and its code is null. */
  timeoutMs?: number;
}

/**
 * Runs a program to completion. A program that cannot be started (not installed) ends with code
 * 127, as in a shell, and the reason in `stderr`: suites probe for tools this way.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: stderr || error.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP port could be reserved');
  return address.port;
}
