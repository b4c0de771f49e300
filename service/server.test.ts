/**
 * The real server process, as `npm start` runs it: first start builds the catalogue from the
 * bundled data, the README's first curl works, and SIGTERM lets a request in flight finish and
 * exits 0 within 10 s.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DATA = join(ROOT, 'data', 'quotes.json');

interface Running {
  child: ChildProcess;
  url: URL;
  lines: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node service/server.ts` on a free port and waits for its "listening" log line. */
async function start(env: Record<string, string>): Promise<Running> {
  // process.execPath is the Node that runs vitest (24, from the project's devDependency).
  const child = spawn(process.execPath, ['service/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line in 30 s:\n${lines.join('\n')}`)),
      30_000,
    );
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(new URL(match[1]));
        }
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    void exit.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${lines.join('\n')}`));
    });
  });
  return { child, url, lines, exit };
}

/** Sends a request in two halves, with `between` run after the first: a request in flight. */
function slowRequest(url: URL, path: string, between: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
    socket.on('connect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nX-Bypass-Auth: true\r\n`);
      between();
      setTimeout(() => socket.write('Connection: close\r\n\r\n'), 500);
    });
  });
}

describe('npm start on a fresh clone', () => {
  let dir: string;
  let server: Running | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotes-server-'));
  });
  afterAll(async () => {
    if (server !== undefined && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exit;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds the catalogue from data/quotes.json, serves it, and shuts down gracefully on SIGTERM', async () => {
    const sqlitePath = join(dir, 'first-start.db');
    server = await start({ SQLITE_PATH: sqlitePath, LOG_LEVEL: 'info' });
    expect(existsSync(sqlitePath)).toBe(true);
    expect(server.lines.some((line) => line.includes('building the catalogue from data/quotes.json'))).toBe(
      true,
    );

    const response = await fetch(new URL('/quotes', server.url), { headers: { 'X-Bypass-Auth': 'true' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as { items: { id: number }[]; pagination: { total_quotes: number } };
    const bundled = (JSON.parse(readFileSync(DATA, 'utf8')) as { id: number }[])
      .map((q) => q.id)
      .sort((a, b) => a - b);
    expect(body.items.map((q) => q.id)).toEqual(bundled.slice(0, 5));
    expect(body.pagination.total_quotes).toBe(bundled.length);

    const denied = await fetch(new URL('/quotes', server.url));
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toBe('Basic realm="quotes", charset="UTF-8"');
    const dev = await fetch(new URL('/quotes/1?fields=id', server.url), {
      headers: { Authorization: `Basic ${Buffer.from('dev:dev').toString('base64')}` },
    });
    expect(await dev.json()).toEqual({ id: 1 });
    // The genre form's hint names a genre the bundled catalogue has: following it finds quotes.
    const bypass = { headers: { 'X-Bypass-Auth': 'true' } };
    const hint = (await (await fetch(new URL('/api/v1/quotes', server.url), bypass)).json()) as {
      details: string;
    };
    const example = /e\.g\. (genre=\S+)$/.exec(hint.details)?.[1];
    expect(example).toBeDefined();
    expect((await fetch(new URL(`/api/v1/quotes?${example}`, server.url), bypass)).status).toBe(200);

    const running = server;
    const started = Date.now();
    const inFlight = await slowRequest(running.url, '/quotes/1?fields=id', () =>
      running.child.kill('SIGTERM'),
    );
    expect(inFlight).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(inFlight.endsWith('{"id":1}')).toBe(true);
    expect(await running.exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(running.lines.join('\n')).not.toMatch(/dev:dev|ZGV2OmRldg/);
  });

  it('exits 0 on SIGTERM within the grace delay, even while a client is still sending its request', async () => {
    const running = await start({ SQLITE_PATH: join(dir, 'first-start.db'), LOG_LEVEL: 'info' });
    server = running;
    const socket = connect(Number(running.url.port), running.url.hostname);
    socket.on('error', () => {});
    await new Promise((resolve) => socket.on('connect', resolve));
    // Headers that never end: without the cut, close() waits for the 15 s request timeout and
    // the process is killed at 9 s, exit code 1, its close hooks not run.
    socket.write(`GET /quotes HTTP/1.1\r\nHost: ${running.url.host}\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    running.child.kill('SIGTERM');
    expect(await running.exit).toEqual({ code: 0, signal: null });
    // server.ts's SHUTDOWN_DELAY_MS (importing it would start a server).
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(running.lines.join('\n')).not.toMatch(/killed by timeout/);
    socket.destroy();
  }, 20_000);

  it('stops at start with one line naming a bad variable', async () => {
    const child = spawn(process.execPath, ['service/server.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', PORT: 'eighty', SQLITE_PATH: join(dir, 'never.db') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toBe("PORT must be an integer from 0 to 65535, got 'eighty'\n");
    expect(existsSync(join(dir, 'never.db'))).toBe(false);
  });

  it('stops with one line when SQLITE_PATH cannot hold a catalogue or the port is taken', async () => {
    const stop = async (env: Record<string, string>) => {
      const child = spawn(process.execPath, ['service/server.ts'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const code = await new Promise((resolve) => child.on('exit', resolve));
      return { code, lines: stderr.trimEnd().split('\n') };
    };
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const accepts = 'SQLITE_PATH must name a catalogue file, or where one can be created; ';
    expect(await stop({ SQLITE_PATH: dir })).toEqual({
      code: 1,
      lines: [`${accepts}'${dir}' is a directory`],
    });
    const underFile = await stop({ SQLITE_PATH: join(file, 'quotes.db') });
    expect(underFile.code).toBe(1);
    expect(underFile.lines).toHaveLength(1);
    expect(underFile.lines[0]).toMatch(new RegExp(`^${accepts}ENOTDIR`));
    // Node's recursive mkdir retries forever where the kernel refuses with ENOENT (/proc).
    if (existsSync('/proc/self')) {
      const proc = await stop({ SQLITE_PATH: '/proc/no-such-dir/quotes.db' });
      expect(proc.code).toBe(1);
      expect(proc.lines).toHaveLength(1);
      // ENOENT as root, EACCES otherwise: either way one line, and the process ends.
      expect(proc.lines[0]).toMatch(new RegExp(`^${accepts}E[A-Z]+: .*mkdir '/proc/no-such-dir'$`));
    }

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const catalogue = join(dir, 'taken.db');
      expect(await stop({ SQLITE_PATH: catalogue, PORT: String(port) })).toEqual({
        code: 1,
        lines: [
          `PORT must be a free port this process may use; cannot listen on 127.0.0.1:${port}: it is in use (EADDRINUSE)`,
        ],
      });
    } finally {
      taken.close();
    }
  });
});
