/**
 * The compose deployment (docker-compose.yml, Dockerfile, deploy/).
 *
 * - Always: the files say what the deployment promises (pinned images, health checks, the one-shot
 *   jobs and their order, the master key reaching only the key step, no host port on the scaled
 *   service, k6 under its profile), and every file they name exists.
 * - Where Docker Compose v2 exists: `docker compose config` accepts the file, and refuses it
 *   without MEILI_MASTER_KEY.
 * - Where a Docker engine runs too: the whole stack comes up, answers through the proxy, scales,
 *   reindexes live, and goes down.
 * Each part that cannot run here skips loudly, saying why.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureKeys, INDEXER_KEY_ACTIONS, SERVICE_KEY_ACTIONS } from '../deploy/meili-keys.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; a missing program is exit code 127, never an exception. */
function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  return new Promise<Run>((done) => {
    execFile(
      command,
      args,
      {
        cwd: ROOT,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 127;
        done({ code, stdout: String(stdout), stderr: String(stderr) || (error?.message ?? '') });
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// What the files promise

type Service = {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  profiles?: string[];
  restart?: string;
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
};
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const service = (name: string): Service => {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};

describe('docker-compose.yml', () => {
  it('runs Meilisearch pinned to a v1.5x tag, in production mode, with the master key required from the environment', () => {
    const meili = service('meilisearch');
    expect(meili.image).toMatch(/^getmeili\/meilisearch:v1\.5\d$/);
    expect(meili.environment?.MEILI_MASTER_KEY).toMatch(/^\$\{MEILI_MASTER_KEY:\?.+\}$/);
    expect(meili.environment?.MEILI_ENV).toBe('production');
    expect(meili.environment?.MEILI_NO_ANALYTICS).toBe('true');
    expect(meili.volumes).toEqual(['meili-data:/meili_data']);
    expect(meili.healthcheck?.test).toEqual(['CMD', 'curl', '-fsS', 'http://127.0.0.1:7700/health']);
  });

  it('runs Redis with a health check', () => {
    expect(service('redis').image).toMatch(/^redis:8/);
    expect(service('redis').healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('gives the master key to the key step only', () => {
    const holders = Object.entries(compose.services)
      .filter(([, s]) => JSON.stringify(s.environment ?? {}).includes('MEILI_MASTER_KEY'))
      .map(([name]) => name);
    expect(holders.sort()).toEqual(['meili-keys', 'meilisearch']);
  });

  it('orders the one-shot jobs: healthy engine, then keys, then the indexer loading data/quotes.json', () => {
    const keys = service('meili-keys');
    expect(keys.command).toEqual(['node', 'deploy/meili-keys.ts', '/run/meili-keys']);
    expect(keys.depends_on).toEqual({ meilisearch: { condition: 'service_healthy' } });
    const indexer = service('indexer');
    expect(indexer.restart).toBe('no');
    expect(indexer.command).toEqual([
      'sh',
      'deploy/with-meili-key.sh',
      'indexer',
      'node',
      'indexer/cli.ts',
      'data/quotes.json',
    ]);
    expect(indexer.environment?.SEARCH_BACKEND).toBe('meilisearch');
    expect(indexer.depends_on).toEqual({ 'meili-keys': { condition: 'service_completed_successfully' } });
    for (const job of [keys, indexer]) expect(job.healthcheck).toEqual({ disable: true });
  });

  it('starts the service on a healthy engine and Redis and a completed indexer, with a search key and Redis limits', () => {
    const svc = service('service');
    expect(svc.command).toEqual([
      'sh',
      'deploy/with-meili-key.sh',
      'search',
      'node',
      '--max-semi-space-size=4',
      '--no-allocation-site-pretenuring',
      'service/server.ts',
    ]);
    expect(svc.depends_on).toEqual({
      meilisearch: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      indexer: { condition: 'service_completed_successfully' },
    });
    expect(svc.environment).toMatchObject({
      SEARCH_BACKEND: 'meilisearch',
      RATE_LIMIT_STORE: 'redis',
      REDIS_URL: 'redis://redis:6379',
      TRUST_PROXY: '1',
    });
    expect(svc.volumes).toEqual(['meili-keys:/run/meili-keys:ro']);
  });

  it('publishes no host port for the service, so it scales behind the proxy', () => {
    expect(service('service').ports).toBeUndefined();
    expect(service('service').expose).toEqual(['3000']);
    const proxy = service('proxy');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, not a template
    expect(proxy.ports).toEqual(['${PROXY_PORT:-3000}:3000']);
    expect(proxy.volumes).toEqual(['./deploy/nginx.conf:/etc/nginx/nginx.conf:ro']);
    expect(proxy.depends_on).toEqual({ service: { condition: 'service_healthy' } });
    const nginx = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8');
    expect(nginx).toMatch(/server service:3000 resolve;/);
    expect(nginx).toMatch(/resolver 127\.0\.0\.11/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
    expect(nginx).toMatch(/location = \/metrics \{[^}]*return 404 '\{"code":404,"error":"not_found"/);
  });

  it('runs k6 only under the loadtest profile, against the proxy', () => {
    const k6 = service('k6');
    expect(k6.image).toMatch(/^grafana\/k6:\d+\.\d+\.\d+$/);
    expect(k6.profiles).toEqual(['loadtest']);
    expect(k6.command).toEqual(['run', 'loadtest/throughput.ts']);
    expect(k6.environment?.BASE_URL).toBe('http://proxy:3000');
    const others = Object.entries(compose.services).filter(([name]) => name !== 'k6');
    expect(others.filter(([, s]) => s.profiles !== undefined)).toEqual([]);
  });

  it('names only files that exist', () => {
    const files = [
      'deploy/meili-keys.ts',
      'deploy/with-meili-key.sh',
      'deploy/nginx.conf',
      'indexer/cli.ts',
      'service/server.ts',
      'loadtest/throughput.ts',
      'loadtest/results',
      'Dockerfile',
    ];
    expect(files.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('builds on Node 24 slim in two stages, with production dependencies only', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    const stages = [...dockerfile.matchAll(/^FROM \$\{NODE_IMAGE\} AS (\w+)$/gm)].map((m) => m[1]);
    expect(stages).toEqual(['deps', 'runtime']);
    expect(dockerfile).toMatch(/npm pkg delete devDependencies/);
    expect(dockerfile).toMatch(/npm install --omit=dev/);
    expect(dockerfile).toMatch(/COPY --from=deps \/app\/node_modules/);
  });

  it('runs as the unprivileged node user, listens on all interfaces and checks /health', () => {
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/HOST=0\.0\.0\.0/);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/health/m);
    expect(dockerfile).toMatch(
      /^CMD \["node", "--max-semi-space-size=4", "--no-allocation-site-pretenuring", "service\/server\.ts"\]$/m,
    );
  });

  it('ships no tests, secrets or local state (.dockerignore allow-list)', () => {
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignore).toContain('**');
    expect(ignore).toContain('**/*.test.ts');
    expect(ignore.filter((l) => l.startsWith('!'))).toEqual([
      '!package.json',
      '!package-lock.json',
      '!service/**',
      '!indexer/**',
      '!deploy/**',
      '!data/quotes.json',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// The key step (deploy/meili-keys.ts), against a scripted /keys API

interface FakeKey {
  uid: string;
  key: string;
  name: string;
  actions: string[];
  indexes: string[];
}

async function keysApi(initial: FakeKey[]) {
  const keys = [...initial];
  const log: string[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://engine').pathname;
      log.push(`${req.method} ${path} ${req.headers.authorization}`);
      let status = 200;
      let body: unknown;
      if (req.method === 'GET' && path === '/keys') {
        body = { results: keys, offset: 0, limit: 1000, total: keys.length };
      } else if (req.method === 'POST' && path === '/keys') {
        const created = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeKey;
        const n = keys.length + 1;
        const key = { ...created, uid: `uid-${n}`, key: `key-${n}` };
        keys.push(key);
        [status, body] = [201, key];
      } else if (req.method === 'DELETE' && path.startsWith('/keys/')) {
        keys.splice(
          keys.findIndex((k) => k.uid === path.slice(6)),
          1,
        );
        status = 204;
      } else {
        status = 404;
        body = { message: 'no route', code: 'not_found', type: 'invalid_request', link: '' };
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    host: `http://127.0.0.1:${port}`,
    keys,
    log,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

describe('the key step', () => {
  it('creates an admin-scoped indexer key and a read-only service key scoped to the live index', async () => {
    const api = await keysApi([]);
    try {
      const values = await ensureKeys(new Meilisearch({ host: api.host, apiKey: 'master' }), 'quotes');
      expect(Object.fromEntries(values)).toEqual({ 'indexer.key': 'key-1', 'search.key': 'key-2' });
      expect(api.keys.map(({ name, actions, indexes }) => ({ name, actions, indexes }))).toEqual([
        { name: 'quotes-indexer', actions: [...INDEXER_KEY_ACTIONS], indexes: ['*'] },
        { name: 'quotes-search', actions: [...SERVICE_KEY_ACTIONS], indexes: ['quotes'] },
      ]);
      expect(api.log.every((line) => line.endsWith('Bearer master'))).toBe(true);
    } finally {
      await api.close();
    }
  });

  it('reuses keys that exist, and re-creates one whose scope changed', async () => {
    const api = await keysApi([
      {
        uid: 'a',
        key: 'kept',
        name: 'quotes-indexer',
        actions: [...INDEXER_KEY_ACTIONS].reverse(),
        indexes: ['*'],
      },
      { uid: 'b', key: 'too-wide', name: 'quotes-search', actions: ['search'], indexes: ['*'] },
    ]);
    try {
      const values = await ensureKeys(new Meilisearch({ host: api.host, apiKey: 'master' }), 'quotes');
      expect(Object.fromEntries(values)).toEqual({ 'indexer.key': 'kept', 'search.key': 'key-2' });
      expect(api.log.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
        'GET /keys',
        'DELETE /keys/b',
        'POST /keys',
      ]);
    } finally {
      await api.close();
    }
  });

  it('writes the keys into owner-only files and never prints them', async () => {
    const api = await keysApi([]);
    const dir = await mkdtemp(join(tmpdir(), 'quotes-keys-'));
    try {
      const result = await run(process.execPath, ['deploy/meili-keys.ts', join(dir, 'keys')], {
        env: {
          ...process.env,
          MEILI_HOST: api.host,
          MEILI_MASTER_KEY: 'master-key-0123456789',
          MEILI_INDEX: 'quotes',
        },
      });
      expect(result.code).toBe(0);
      expect(await readFile(join(dir, 'keys', 'indexer.key'), 'utf8')).toBe('key-1');
      expect(await readFile(join(dir, 'keys', 'search.key'), 'utf8')).toBe('key-2');
      expect((await stat(join(dir, 'keys', 'search.key'))).mode & 0o777).toBe(0o600);
      expect(`${result.stdout}${result.stderr}`).not.toMatch(/key-1|key-2|master-key/);
    } finally {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to run without the master key', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, MEILI_HOST: 'http://127.0.0.1:9' };
    delete env.MEILI_MASTER_KEY;
    const result = await run(process.execPath, ['deploy/meili-keys.ts', tmpdir()], { env });
    expect([result.code, result.stderr.trim()]).toEqual([
      2,
      'MEILI_MASTER_KEY is required (the keys are created with it)',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Docker Compose itself

const composeVersion = await run('docker', ['compose', 'version'], { timeoutMs: 20_000 });
const hasCompose = composeVersion.code === 0;
const engine = hasCompose
  ? await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 20_000 })
  : undefined;
const hasEngine = engine?.code === 0;
if (!hasCompose) {
  console.warn(
    `[compose] 'docker compose config' and the end-to-end test SKIPPED: Docker Compose v2 is not installed (${composeVersion.stderr.trim().split('\n')[0]})`,
  );
} else if (!hasEngine) {
  console.warn(
    `[compose] end-to-end test SKIPPED: no Docker engine (${engine?.stderr.trim().split('\n')[0] ?? 'docker info failed'})`,
  );
}

const MASTER_KEY = randomBytes(24).toString('hex');

describe.skipIf(!hasCompose)('docker compose config', () => {
  it('accepts the file with a master key', async () => {
    const result = await run('docker', ['compose', '--env-file', '/dev/null', 'config', '--quiet'], {
      env: { ...process.env, MEILI_MASTER_KEY: MASTER_KEY },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('refuses it without one, saying what to set', async () => {
    const env = { ...process.env };
    delete env.MEILI_MASTER_KEY;
    const result = await run('docker', ['compose', '--env-file', '/dev/null', 'config', '--quiet'], { env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/set MEILI_MASTER_KEY in \.env/);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((done) => setTimeout(done, 1_000));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(!hasCompose || !hasEngine)('the compose stack, end to end', () => {
  const project = `quotes-e2e-${randomBytes(3).toString('hex')}`;
  let port = 0;
  let env: NodeJS.ProcessEnv = {};
  const compose = (args: string[], timeoutMs = 120_000) =>
    run('docker', ['compose', '--env-file', '/dev/null', '-p', project, ...args], { env, timeoutMs });
  const get = (path: string) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { 'X-Bypass-Auth': 'true' },
      signal: AbortSignal.timeout(5_000),
    });

  beforeAll(async () => {
    port = await freePort();
    env = {
      ...process.env,
      MEILI_MASTER_KEY: MASTER_KEY,
      PROXY_PORT: String(port),
      RATE_LIMIT_MAX: '100000',
    };
    const up = await compose(['up', '-d', '--build'], 900_000);
    if (up.code !== 0) throw new Error(`docker compose up failed:\n${up.stderr}`);
    await waitFor('/ready through the proxy', async () => (await get('/ready')).status === 200, 300_000);
  }, 1_200_000);

  afterAll(async () => {
    const down = await compose(['down', '--volumes', '--remove-orphans'], 300_000);
    if (down.code !== 0) console.warn(`[compose] docker compose down failed: ${down.stderr}`);
  }, 300_000);

  it('answers health, readiness and the first page through the proxy', async () => {
    const health = await get('/health');
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await get('/ready');
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    const list = await get('/quotes');
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await list.json()) as { items: { id: number }[]; pagination: { total_quotes: number } };
    expect(body.items).toHaveLength(5);
    expect(body.items.map((q) => q.id)).toEqual([...body.items.map((q) => q.id)].sort((a, b) => a - b));
    expect(body.pagination.total_quotes).toBeGreaterThan(5);
    const id = body.items[0]?.id;
    const one = await get(`/quotes/${id}`);
    expect([one.status, ((await one.json()) as { id: number }).id]).toEqual([200, id]);
    // The metrics stay inside the network: the proxy answers them as an unknown path.
    const metrics = await get('/metrics');
    expect([metrics.status, metrics.headers.get('content-type'), await metrics.json()]).toEqual([
      404,
      'application/json; charset=utf-8',
      { code: 404, error: 'not_found', details: 'No resource at /metrics' },
    ]);
  });

  it('keeps answering with three replicas behind the proxy', async () => {
    const scaled = await compose(['up', '-d', '--no-deps', '--scale', 'service=3', 'service'], 300_000);
    expect([scaled.code, scaled.code === 0 ? '' : scaled.stderr]).toEqual([0, '']);
    await waitFor(
      'three healthy replicas',
      async () => {
        const ps = await compose(['ps', '--format', '{{.Health}}', 'service']);
        const states = ps.stdout.trim().split('\n');
        return states.length === 3 && states.every((s) => s === 'healthy');
      },
      180_000,
    );
    for (let i = 0; i < 20; i++) expect((await get('/quotes/random')).status).toBe(200);
  });

  it('reindexes the live stack without a failed request', async () => {
    const total = async () =>
      ((await (await get('/quotes')).json()) as { pagination: { total_quotes: number } }).pagination
        .total_quotes;
    const before = await total();
    let failures = 0;
    let requests = 0;
    let done = false;
    const probe = (async () => {
      while (!done) {
        requests++;
        if ((await get('/quotes?limit=100').catch(() => undefined))?.status !== 200) failures++;
      }
    })();
    const reindex = await compose(['run', '--rm', 'indexer'], 600_000);
    done = true;
    await probe;
    expect(reindex.code).toBe(0);
    expect(requests).toBeGreaterThan(0);
    expect(failures).toBe(0);
    expect(await total()).toBe(before);
  });
});
