/** A throw-away redis-server for the rate-limit store comparison, when one is installed. */
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { type Child, start } from './processes.ts';

/** The `redis-server` version on PATH, or undefined when there is none. */
export function redisServerVersion(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) return undefined;
  return /v=([0-9.]+)/.exec(probe.stdout)?.[1] ?? 'unknown';
}

/**
 * Sends one inline command on a new connection and resolves what `parse` makes of the reply so
 * far, once it returns something other than undefined (undefined: wait for more); resolves
 * undefined if the server does not answer in `timeoutMs`.
 */
function ask<T>(
  port: number,
  command: string,
  timeoutMs: number,
  parse: (reply: string) => T | undefined,
): Promise<T | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (value: T | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (data) => {
      reply += data.toString('latin1');
      const value = parse(reply);
      if (value !== undefined) done(value);
    });
  });
}

/** Sends PING and resolves true on +PONG. */
async function ping(port: number): Promise<boolean> {
  return (await ask(port, 'PING', 500, (reply) => reply.startsWith('+PONG'))) === true;
}

/**
 * How many script calls (`EVALSHA`, and `EVAL` once per connection) the server has run, from
 * `INFO commandstats`; undefined when it does not answer within a second.
 */
export function scriptCalls(port: number): Promise<number | undefined> {
  return ask(port, 'INFO commandstats', 1000, (reply) => {
    // A bulk string: `$<length>\r\n<text>\r\n`.
    const header = /^\$(\d+)\r\n/.exec(reply);
    if (header === null || reply.length < header[0].length + Number(header[1])) return undefined;
    let calls = 0;
    for (const m of reply.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(m[1]);
    return calls;
  });
}

/** Starts an in-memory redis-server (no persistence) on `port` and waits until it answers. */
export async function startRedis(port: number, env: NodeJS.ProcessEnv): Promise<Child> {
  const child = start(
    'redis-server',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    env,
  );
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) break;
    if (await ping(port)) return child;
    await delay(50);
  }
  await child.stop();
  throw new Error(`redis-server did not answer on port ${port}:\n${child.output().trim()}`);
}
