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
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureKeys, INDEXER_KEY_ACTIONS, SERVICE_KEY_ACTIONS } from '../deploy/meili-keys.ts';
import { describeMissing, missingImages } from './test-support/containers.ts';
import { freePort, runProcess } from './test-support/processes.ts';
import { announceSkip, announceUsing } from './test-support/suites.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs a command from the repository root; a missing program is exit code 127, never an exception. */
function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  return runProcess(command, args, { cwd: ROOT, env: options.env, timeoutMs: options.timeoutMs ?? 60_000 });
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
  secrets?: unknown[];
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
};
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  secrets: Record<string, unknown>;
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
    expect(keys.command).toEqual([
      'node',
      'deploy/meili-keys.ts',
      '/run/meili-key-step/indexer',
      '/run/meili-key-step/search',
    ]);
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
      '--max-semi-space-size=16',
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
    expect(svc.volumes).toEqual(['meili-search-key:/run/meili-keys:ro']);
  });

  it("gives the indexer the service's MEILI_TIMEOUT_MS, which it writes as the index's searchCutoffMs", () => {
    // Otherwise a MEILI_TIMEOUT_MS of .env reaches the service only: above the default the engine
    // cuts searches short (503) before the service stops waiting; below it, searches the service
    // gave up on run on in the engine.
    const timeout = service('service').environment?.MEILI_TIMEOUT_MS;
    expect(timeout).toMatch(/^\$\{MEILI_TIMEOUT_MS:-\d+\}$/);
    expect(service('indexer').environment?.MEILI_TIMEOUT_MS).toBe(timeout);
  });

  it('keeps each Meilisearch key in a volume of its own: the service never mounts the indexer key', () => {
    expect(service('meili-keys').volumes).toEqual([
      'meili-indexer-key:/run/meili-key-step/indexer',
      'meili-search-key:/run/meili-key-step/search',
    ]);
    expect(service('indexer').volumes).toEqual(['meili-indexer-key:/run/meili-keys:ro']);
    const mounting = Object.entries(compose.services)
      .filter(([, s]) => (s.volumes ?? []).some((v) => v.startsWith('meili-indexer-key:')))
      .map(([name]) => name);
    expect(mounting.sort()).toEqual(['indexer', 'meili-keys']);
    expect(Object.keys(compose.volumes).sort()).toEqual([
      'meili-data',
      'meili-indexer-key',
      'meili-search-key',
    ]);
  });

  it('is closed by default: X-Bypass-Auth denied, the users as a secret file', () => {
    const svc = service('service');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, not a template
    expect(svc.environment?.AUTH_BYPASS).toBe('${AUTH_BYPASS:-deny}');
    expect(svc.environment?.AUTH_USERS_FILE).toBe('/run/secrets/auth-users');
    expect(svc.environment).not.toHaveProperty('AUTH_USERS');
    expect(svc.secrets).toEqual(['auth-users']);
    expect(compose.secrets).toEqual({ 'auth-users': { environment: 'AUTH_USERS' } });
  });

  it('publishes no host port for the service, so it scales behind the proxy', () => {
    expect(service('service').ports).toBeUndefined();
    expect(service('service').expose).toEqual(['3000']);
    const proxy = service('proxy');
    // 127.0.0.1 unless PROXY_BIND opens it: one variable.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, not a template
    expect(proxy.ports).toEqual(['${PROXY_BIND:-127.0.0.1}:${PROXY_PORT:-3000}:3000']);
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
    // The deployment refuses X-Bypass-Auth unless opened: k6 signs in as a user by default.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, not a template
    expect(k6.environment?.BYPASS).toBe('${LOADTEST_BYPASS:-false}');
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
      'deploy/rollout.sh',
    ];
    expect(files.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('has no syntax directive, which would make BuildKit pull a frontend image from a registry', () => {
    expect(dockerfile).not.toMatch(/^#\s*syntax\s*=/im);
  });

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

describe('scaling and rollouts', () => {
  const deployment = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
  const header = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8').split('\nname:')[0] ?? '';

  it('documents one way to change the replicas, deploy/rollout.sh, and no `--scale` of Compose', () => {
    // Two forms of `up --scale` (with and without --no-deps) recreate every replica when alternated.
    for (const [name, text] of [
      ['docs/deployment.md', deployment],
      ['docker-compose.yml', header],
    ] as const) {
      expect([name, text.match(/--scale service=/g) ?? []]).toEqual([name, []]);
      expect([name, /deploy\/rollout\.sh --scale \d/.test(text)]).toEqual([name, true]);
      expect([name, /deploy\/rollout\.sh --build/.test(text)]).toEqual([name, true]);
    }
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts['deploy:rollout']).toBe('sh deploy/rollout.sh');
  });

  it('refuses a scale that is not a positive count', async () => {
    for (const args of [['--scale', '0'], ['--scale', 'three'], ['--scale'], ['--sideways']]) {
      const result = await run('sh', ['deploy/rollout.sh', ...args], {
        env: { ...process.env, DOCKER_COMPOSE: 'false' },
      });
      expect([args, result.code, result.stderr]).toEqual([
        args,
        2,
        expect.stringMatching(/^usage: .*rollout\.sh \[--build\] \[--scale N\]/),
      ]);
    }
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
  const removed = new Map<string, string>();
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
        const created = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Partial<FakeKey>;
        const n = keys.length + 1;
        // The engine derives a key's value from its uid (and the master key): a uid given again
        // gives the value back.
        const uid = created.uid ?? `uid-${n}`;
        const key = { ...created, uid, key: removed.get(uid) ?? `key-${n}` } as FakeKey;
        keys.push(key);
        [status, body] = [201, key];
      } else if (req.method === 'DELETE' && path.startsWith('/keys/')) {
        const [gone] = keys.splice(
          keys.findIndex((k) => k.uid === path.slice(6)),
          1,
        );
        if (gone !== undefined) removed.set(gone.uid, gone.key);
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
  // What the indexer writes, by name: a pattern such as `quotes*` would also reach another
  // application's `quotes_staging` on a shared engine.
  const INDEXER_INDEXES = [
    'quotes',
    'quotes_build_*',
    'quotes_authors',
    'quotes_authors_build_*',
    'quotes_works',
    'quotes_works_build_*',
  ];

  it("creates an indexer key and a read-only service key, each scoped to its catalogue's indexes", async () => {
    const api = await keysApi([]);
    try {
      const values = await ensureKeys(new Meilisearch({ host: api.host, apiKey: 'master' }), 'quotes');
      expect(Object.fromEntries(values)).toEqual({ 'indexer.key': 'key-1', 'search.key': 'key-2' });
      expect(api.keys.map(({ name, actions, indexes }) => ({ name, actions, indexes }))).toEqual([
        { name: 'quotes-indexer', actions: [...INDEXER_KEY_ACTIONS], indexes: INDEXER_INDEXES },
        {
          name: 'quotes-search',
          actions: [...SERVICE_KEY_ACTIONS],
          indexes: ['quotes', 'quotes_authors', 'quotes_works'],
        },
      ]);
      expect(api.log.every((line) => line.endsWith('Bearer master'))).toBe(true);
    } finally {
      await api.close();
    }
  });

  it('reuses keys that exist, and re-creates one whose scope changed under its uid, keeping its value', async () => {
    const api = await keysApi([
      {
        uid: 'a',
        key: 'kept',
        name: 'quotes-indexer',
        actions: [...INDEXER_KEY_ACTIONS].reverse(),
        indexes: [...INDEXER_INDEXES].reverse(),
      },
      { uid: 'b', key: 'too-wide', name: 'quotes-search', actions: ['search'], indexes: ['*'] },
    ]);
    try {
      const values = await ensureKeys(new Meilisearch({ host: api.host, apiKey: 'master' }), 'quotes');
      expect(Object.fromEntries(values)).toEqual({ 'indexer.key': 'kept', 'search.key': 'too-wide' });
      expect(api.keys.find((k) => k.name === 'quotes-search')).toMatchObject({
        uid: 'b',
        indexes: ['quotes', 'quotes_authors', 'quotes_works'],
      });
      expect(api.log.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
        'GET /keys',
        'DELETE /keys/b',
        'POST /keys',
      ]);
    } finally {
      await api.close();
    }
  });

  it.each([
    ['every index', ['*']],
    ['every index named like the live one', ['quotes*']],
  ])('narrows an indexer key of an earlier release that reached %s', async (_, indexes) => {
    const api = await keysApi([
      {
        uid: 'a',
        key: 'all-indexes',
        name: 'quotes-indexer',
        actions: [...INDEXER_KEY_ACTIONS],
        indexes,
      },
    ]);
    try {
      const values = await ensureKeys(new Meilisearch({ host: api.host, apiKey: 'master' }), 'quotes');
      // The same value, now reaching only the catalogue's own indexes.
      expect(values.get('indexer.key')).toBe('all-indexes');
      expect(api.log.map((line) => line.split(' ').slice(0, 2).join(' '))).toContain('DELETE /keys/a');
      expect(api.keys.find((k) => k.name === 'quotes-indexer')).toMatchObject({
        uid: 'a',
        indexes: INDEXER_INDEXES,
      });
    } finally {
      await api.close();
    }
  });

  it('writes each key into its own directory when given two', async () => {
    const api = await keysApi([]);
    const dir = await mkdtemp(join(tmpdir(), 'quotes-keys-'));
    try {
      const result = await run(
        process.execPath,
        ['deploy/meili-keys.ts', join(dir, 'indexer'), join(dir, 'search')],
        { env: { ...process.env, MEILI_HOST: api.host, MEILI_MASTER_KEY: 'master-key-0123456789' } },
      );
      expect(result.code).toBe(0);
      expect(await readdir(join(dir, 'indexer'))).toEqual(['indexer.key']);
      expect(await readdir(join(dir, 'search'))).toEqual(['search.key']);
      expect(await readFile(join(dir, 'search', 'search.key'), 'utf8')).toBe('key-2');
      expect((await stat(join(dir, 'indexer', 'indexer.key'))).mode & 0o777).toBe(0o600);
    } finally {
      await api.close();
      await rm(dir, { recursive: true, force: true });
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

  it('refuses a MEILI_HOST holding a user name or password, without printing it', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MEILI_HOST: 'http://proxyuser:s3cret@127.0.0.1:9',
      MEILI_MASTER_KEY: 'master-key-0123456789',
    };
    const result = await run(process.execPath, ['deploy/meili-keys.ts', tmpdir()], { env });
    expect([result.code, result.stderr.trim()]).toEqual([
      2,
      "MEILI_HOST must not hold a user name or password: the engine's key is MEILI_API_KEY (MEILI_ADMIN_KEY for the indexer), got 'http://…@127.0.0.1:9'",
    ]);
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

/**
 * The images the stack runs or builds on: every `image:` of the compose file but the one it
 * builds and k6's (the k6 scripts run through the project's own runner here), and the
 * Dockerfile's base image.
 */
function stackImages(): string[] {
  const named = Object.values(compose.services)
    .map((s) => s.image)
    .filter(
      (image): image is string => image !== undefined && !/^(quotes-service:|grafana\/k6:)/.test(image),
    );
  const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
  return [...new Set([...named, ...(base === undefined ? [] : [base])])].sort();
}

const MEILI_IMAGE = service('meilisearch').image ?? '';
const missing = hasCompose && hasEngine ? await missingImages(stackImages()) : [];
/** Without a Meilisearch image, the rest of the stack still runs, on the embedded engine. */
const onSqlite = missing.length === 1 && missing[0]?.image === MEILI_IMAGE;
const STANDINS = 'service/test-support/standins';
const skipStack = !hasCompose
  ? `Docker Compose v2 is not installed (${composeVersion.stderr.trim().split('\n')[0]})`
  : !hasEngine
    ? `no Docker engine (${engine?.stderr.trim().split('\n')[0] ?? 'docker info failed'})`
    : missing.length > 0 && !onSqlite
      ? `images missing: ${describeMissing(missing)}; ${STANDINS}/build.sh builds local stand-ins`
      : undefined;
if (skipStack === undefined) {
  announceUsing(
    import.meta.url,
    `Docker engine ${engine?.stdout.trim()}, ${composeVersion.stdout.trim()}; images ${stackImages().join(', ')}`,
  );
}
if (!hasCompose) announceSkip(import.meta.url, `'docker compose config': ${skipStack}`);
if (skipStack !== undefined) announceSkip(import.meta.url, `the end-to-end test: ${skipStack}`);
if (onSqlite) {
  announceSkip(
    import.meta.url,
    `the Meilisearch parts of the end-to-end test (the key volumes, the live reindex): ${describeMissing(missing)}; the rest runs on the embedded SQLite engine (${STANDINS}/compose.sqlite.yml)`,
  );
}

describe('images', () => {
  it('names every image the stack needs, so a machine without them skips saying which', () => {
    expect(stackImages()).toEqual([
      'getmeili/meilisearch:v1.53',
      'nginx:1.28-alpine',
      'node:24-slim',
      'redis:8-alpine',
    ]);
  });

  it.skipIf(!hasEngine)(
    'reports an image that is neither present nor pullable by name, with why',
    async () => {
      const absent = `quotes-test.invalid/absent:${randomBytes(4).toString('hex')}`;
      const found = await missingImages([absent, absent]);
      expect(found).toHaveLength(1);
      expect(found[0]?.image).toBe(absent);
      expect(found[0]?.reason).toMatch(/^not present, and the pull failed: ./);
      expect(describeMissing(found)).toBe(`${absent} (${found[0]?.reason})`);
    },
  );
});

const MASTER_KEY = randomBytes(24).toString('hex');
/** The env file the stack reads is replaced by the test's own variables: a developer's .env stays out. */
const COMPOSE = ['compose', '--env-file', '/dev/null'];

type ConfigService = {
  environment?: Record<string, string | null>;
  ports?: { target: number; published: string; host_ip?: string }[];
  secrets?: { source: string; target: string; uid?: string; mode?: number }[];
};
async function composeConfig(extra: NodeJS.ProcessEnv): Promise<Record<string, ConfigService>> {
  const result = await run('docker', [...COMPOSE, 'config', '--format', 'json'], {
    env: { ...process.env, MEILI_MASTER_KEY: MASTER_KEY, AUTH_USERS: 'alice:pw-0123456789', ...extra },
  });
  expect(result.stderr).toBe('');
  return (JSON.parse(result.stdout) as { services: Record<string, ConfigService> }).services;
}

describe.skipIf(!hasCompose)('docker compose config', () => {
  it('accepts the file with a master key and a user', async () => {
    const result = await run('docker', [...COMPOSE, 'config', '--quiet'], {
      env: { ...process.env, MEILI_MASTER_KEY: MASTER_KEY, AUTH_USERS: 'alice:secret' },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('refuses it without a master key, saying what to set', async () => {
    const env = { ...process.env };
    delete env.MEILI_MASTER_KEY;
    const result = await run('docker', [...COMPOSE, 'config', '--quiet'], { env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/set MEILI_MASTER_KEY in \.env/);
  });

  it('is closed by default: X-Bypass-Auth denied, users from a secret file, not from the environment', async () => {
    const env = (await composeConfig({ AUTH_BYPASS: undefined })).service?.environment ?? {};
    expect(env.AUTH_BYPASS).toBe('deny');
    expect(env.AUTH_USERS_FILE).toBe('/run/secrets/auth-users');
    expect(Object.keys(env)).not.toContain('AUTH_USERS');
    expect(JSON.stringify(env)).not.toContain('pw-0123456789');
    const secrets = (await composeConfig({})).service?.secrets;
    expect(secrets).toEqual([{ source: 'auth-users', target: '/run/secrets/auth-users' }]);
  });

  it('publishes the proxy on 127.0.0.1 only, and on every interface with PROXY_BIND=0.0.0.0', async () => {
    const local = (await composeConfig({ PROXY_BIND: undefined, PROXY_PORT: '3999' })).proxy?.ports;
    expect(local).toEqual([
      expect.objectContaining({ target: 3000, published: '3999', host_ip: '127.0.0.1' }),
    ]);
    const all = (await composeConfig({ PROXY_BIND: '0.0.0.0', PROXY_PORT: '3999' })).proxy?.ports;
    expect(all).toEqual([expect.objectContaining({ target: 3000, published: '3999', host_ip: '0.0.0.0' })]);
  });
});

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((done) => setTimeout(done, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** How long each phase of the end-to-end test took, logged as it ends and summed up at the end. */
const phases: [string, number][] = [];
async function phase<T>(name: string, body: () => Promise<T>): Promise<T> {
  const began = performance.now();
  try {
    return await body();
  } finally {
    const seconds = (performance.now() - began) / 1000;
    phases.push([name, seconds]);
    console.log(`[compose] phase ${name}: ${seconds.toFixed(1)} s`);
  }
}

interface Reading {
  requests: number;
  failures: number;
  /** The first few failures: status or error. */
  examples: string[];
}

describe.skipIf(skipStack !== undefined)('the compose stack, end to end', () => {
  const project = `quotes-e2e-${randomBytes(3).toString('hex')}`;
  const user = 'e2e';
  const password = randomBytes(12).toString('hex');
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  let port = 0;
  let env: NodeJS.ProcessEnv = {};
  const files = onSqlite ? ['-f', 'docker-compose.yml', '-f', `${STANDINS}/compose.sqlite.yml`] : [];
  const stack = [...COMPOSE, ...files, '-p', project];
  const compose = (args: string[], timeoutMs = 120_000, extra: NodeJS.ProcessEnv = {}) =>
    run('docker', [...stack, ...args], { env: { ...env, ...extra }, timeoutMs });
  const get = (path: string, headers: Record<string, string> = { authorization }) =>
    fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
  const replicas = async () =>
    (await compose(['ps', '-q', 'service'])).stdout
      .trim()
      .split('\n')
      .filter((id) => id !== '');
  const rollout = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const result = await run('sh', ['deploy/rollout.sh', ...args], {
      env: { ...env, ...extra, DOCKER_COMPOSE: `docker ${stack.join(' ')}` },
      timeoutMs: 600_000,
    });
    console.log(result.stdout.trim());
    expect([result.code, result.code === 0 ? '' : result.stderr]).toEqual([0, '']);
  };
  /** Reads through the proxy without pause while `during` runs; counts what failed. */
  const whileReading = async (during: () => Promise<void>): Promise<Reading> => {
    const reading: Reading = { requests: 0, failures: 0, examples: [] };
    let done = false;
    const client = async () => {
      while (!done) {
        reading.requests++;
        try {
          const res = await get('/quotes?limit=20');
          const body = await res.text();
          if (res.status !== 200) throw new Error(`status ${res.status}: ${body.slice(0, 160)}`);
        } catch (error) {
          reading.failures++;
          if (reading.examples.length < 5) {
            reading.examples.push(`${new Date().toISOString().slice(11, 23)} ${(error as Error).message}`);
          }
        }
      }
    };
    const clients = [client()];
    try {
      await during();
    } finally {
      done = true;
      await Promise.all(clients);
    }
    const restarts = await run('docker', ['inspect', '-f', '{{.RestartCount}}', ...(await replicas())]);
    console.log(
      `[compose] read through the proxy meanwhile: ${reading.requests} requests, ${reading.failures} failed; restarts of the replicas: ${restarts.stdout.trim().split('\n').join(' ')}`,
    );
    return reading;
  };
  /** Runs a k6 script through the project's runner (loadtest/k6-shim) against the proxy. */
  const k6 = (script: string, extra: Record<string, string>) =>
    run(
      process.execPath,
      ['--import', join(ROOT, 'loadtest/k6-shim/register.ts'), join(ROOT, 'loadtest/k6-shim/run.ts'), script],
      {
        env: {
          ...process.env,
          BASE_URL: `http://127.0.0.1:${port}`,
          AUTH_USER: user,
          AUTH_PASS: password,
          RESULTS_DIR: resultsDir,
          ...extra,
        },
        timeoutMs: 300_000,
      },
    );
  let resultsDir = '';
  const began = performance.now();

  beforeAll(async () => {
    port = await freePort();
    resultsDir = await mkdtemp(join(tmpdir(), 'quotes-e2e-k6-'));
    env = {
      ...process.env,
      MEILI_MASTER_KEY: MASTER_KEY,
      AUTH_USERS: `${user}:${password}`,
      PROXY_PORT: String(port),
      RATE_LIMIT_MAX: '1000000',
      // Plain BuildKit, as `docker compose up --build` uses where nothing else is configured.
      DOCKER_BUILDKIT: '1',
    };
    for (const name of ['AUTH_BYPASS', 'PROXY_BIND', 'LOG_LEVEL', 'MEILI_INDEX']) delete env[name];
  });

  afterAll(async () => {
    await phase('down', async () => {
      const down = await compose(['down', '--volumes', '--remove-orphans'], 300_000);
      if (down.code !== 0) console.warn(`[compose] docker compose down failed: ${down.stderr}`);
    });
    await rm(resultsDir, { recursive: true, force: true });
    const total = (performance.now() - began) / 1000;
    console.log(
      `[compose] phases: ${phases.map(([name, s]) => `${name} ${s.toFixed(1)} s`).join(', ')}; whole test ${total.toFixed(1)} s`,
    );
  }, 300_000);

  it('builds the image with plain BuildKit and no registry (no frontend image to pull)', async () => {
    await phase('build', async () => {
      const build = await compose(['build'], 900_000);
      expect([build.code, build.code === 0 ? '' : build.stderr]).toEqual([0, '']);
    });
  }, 900_000);

  it('comes up, and answers health, readiness and the first page through the proxy', async () => {
    await phase('up', async () => {
      const up = await compose(['up', '-d'], 600_000);
      expect([up.code, up.code === 0 ? '' : up.stderr]).toEqual([0, '']);
      await waitFor('/ready through the proxy', async () => (await get('/ready')).status === 200, 300_000);
    });
    const health = await get('/health');
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
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
    // The proxy takes what a replica takes: a query string of 30,000 characters reaches one.
    const long = await get(`/quotes?author=${'a'.repeat(30_000)}`);
    expect([long.status, long.headers.get('x-ratelimit-limit') !== null]).toEqual([400, true]);
    expect(((await long.json()) as { details: string }).details).toMatch(/200 characters/);
    // What it refuses itself is answered as the service would, in the API's JSON.
    const huge = await get('/quotes', { authorization, 'x-padding': 'p'.repeat(70_000) });
    expect([
      huge.status,
      huge.headers.get('content-type'),
      ((await huge.json()) as { error: string }).error,
    ]).toEqual([400, 'application/json; charset=utf-8', 'bad_request']);
  }, 900_000);

  it('is closed by default: X-Bypass-Auth is refused, the user of AUTH_USERS gets in, and no password is in the environment', async () => {
    const bypass = await get('/quotes', { 'x-bypass-auth': 'true' });
    expect(bypass.status).toBe(403);
    expect(((await bypass.json()) as { details: string }).details).toMatch(/AUTH_BYPASS=deny/);
    const anonymous = await get('/quotes', {});
    expect(anonymous.status).toBe(401);
    const wrong = await get('/quotes', {
      authorization: `Basic ${Buffer.from(`${user}:not-${password}`).toString('base64')}`,
    });
    expect(wrong.status).toBe(401);
    expect((await get('/quotes')).status).toBe(200);
    for (const id of await replicas()) {
      const inspect = await run('docker', ['inspect', '-f', '{{json .Config.Env}}', id]);
      expect(inspect.code).toBe(0);
      expect(inspect.stdout).not.toContain(password);
      expect(inspect.stdout).not.toMatch(/"AUTH_USERS=/);
    }
    const published = await compose(['port', 'proxy', '3000']);
    expect(published.stdout.trim()).toBe(`127.0.0.1:${port}`);
  });

  it.skipIf(onSqlite)(
    'gives the service no way to read the indexer key: inside a replica, no file holds it',
    async () => {
      await phase('keys', async () => {
        const key = await compose([
          'run',
          '--rm',
          '--no-deps',
          '-T',
          'indexer',
          'cat',
          '/run/meili-keys/indexer.key',
        ]);
        expect(key.code).toBe(0);
        const indexerKey = key.stdout.trim();
        expect(indexerKey).toMatch(/^[0-9a-f]{64}$/);
        // Every file a replica can read, searched for the key's value; and each key it holds, tried on
        // an admin route of the engine.
        const probe = `
        const { lstatSync, readdirSync, readFileSync } = require('node:fs');
        const seen = [];
        const walk = (dir) => {
          for (const name of (() => { try { return readdirSync(dir); } catch { return []; } })()) {
            const path = dir + '/' + name;
            let st;
            try { st = lstatSync(path); } catch { continue; }
            if (st.isDirectory()) walk(path);
            else if (st.isFile() && st.size < 64 * 1024 * 1024) {
              try { if (readFileSync(path).includes(process.env.NEEDLE)) seen.push(path); } catch {}
            }
          }
        };
        for (const top of readdirSync('/')) if (!['proc', 'sys', 'dev'].includes(top)) walk('/' + top);
        const keys = {};
        const dir = '/run/meili-keys';
        (async () => {
          for (const name of (() => { try { return readdirSync(dir); } catch { return []; } })()) {
            let value;
            if (!lstatSync(dir + '/' + name).isFile()) continue;
            try { value = readFileSync(dir + '/' + name, 'utf8').trim(); } catch { keys[name] = 'unreadable'; continue; }
            const res = await fetch('http://meilisearch:7700/indexes', { headers: { authorization: 'Bearer ' + value } });
            keys[name] = res.status;
          }
          console.log(JSON.stringify({ seen, keys }));
        })();`;
        const [replica] = await replicas();
        const inside = await run(
          'docker',
          ['exec', '-e', `NEEDLE=${indexerKey}`, String(replica), 'node', '-e', probe],
          {
            timeoutMs: 120_000,
          },
        );
        expect([inside.code, inside.stderr]).toEqual([0, '']);
        // The probe's own environment holds the value it looks for; /proc is not searched.
        expect(JSON.parse(inside.stdout)).toEqual({ seen: [], keys: { 'search.key': 403 } });
      });
    },
    300_000,
  );

  it('scales from one replica to three, one at a time, without a failed request', async () => {
    await phase('scale 1→3', async () => {
      const reading = await whileReading(() => rollout(['--scale', '3']));
      expect(reading.requests).toBeGreaterThan(0);
      expect([reading.failures, reading.examples]).toEqual([0, []]);
    });
    expect(await replicas()).toHaveLength(3);
  }, 600_000);

  it.skipIf(onSqlite)(
    'reindexes the live stack without a failed request',
    async () => {
      const total = async () =>
        ((await (await get('/quotes')).json()) as { pagination: { total_quotes: number } }).pagination
          .total_quotes;
      const before = await total();
      await phase('reindex', async () => {
        const reading = await whileReading(async () => {
          const reindex = await compose(['run', '--rm', 'indexer'], 600_000);
          expect([reindex.code, reindex.code === 0 ? '' : reindex.stderr]).toEqual([0, '']);
        });
        expect(reading.requests).toBeGreaterThan(0);
        expect([reading.failures, reading.examples]).toEqual([0, []]);
      });
      expect(await total()).toBe(before);
    },
    600_000,
  );

  it('passes the throughput script through the proxy (k6 runner), thresholds held', async () => {
    await phase('k6 throughput', async () => {
      const result = await k6('loadtest/throughput.ts', { K6_SHIM_ITERATIONS: '300' });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain('✓ status is 200: 100.00% (300/300)');
      expect(result.stdout).not.toContain('✗');
    });
  }, 300_000);

  it('rolls out a new image and configuration replica by replica without a failed request', async () => {
    const before = await replicas();
    await phase('rollout', async () => {
      const reading = await whileReading(() => rollout(['--build'], { LOG_LEVEL: 'warn' }));
      expect(reading.requests).toBeGreaterThan(0);
      expect([reading.failures, reading.examples]).toEqual([0, []]);
    });
    const after = await replicas();
    expect(after).toHaveLength(3);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
    for (const id of after) {
      const inspect = await run('docker', ['inspect', '-f', '{{json .Config.Env}}', id]);
      expect(inspect.stdout).toContain('"LOG_LEVEL=warn"');
    }
  }, 600_000);

  it.skipIf(onSqlite)(
    'stops a rollout whose new replica cannot read the catalogue, the old replicas serving throughout',
    async () => {
      const before = await replicas();
      await phase('refused rollout', async () => {
        let result: Awaited<ReturnType<typeof run>> | undefined;
        const reading = await whileReading(async () => {
          // An index the service key does not reach: the new replica is healthy, never ready.
          result = await run('sh', ['deploy/rollout.sh'], {
            env: {
              ...env,
              MEILI_INDEX: 'not_the_catalogue',
              HEALTH_TIMEOUT_S: '25',
              DOCKER_COMPOSE: `docker ${stack.join(' ')}`,
            },
            timeoutMs: 300_000,
          });
        });
        console.log(result?.stdout.trim());
        expect(result?.code).toBe(1);
        expect(result?.stdout).toMatch(/not healthy and ready after 25 s \(running healthy, not ready: 503 /);
        expect(reading.requests).toBeGreaterThan(0);
        expect([reading.failures, reading.examples]).toEqual([0, []]);
      });
      expect([...(await replicas())].sort()).toEqual([...before].sort());
    },
    600_000,
  );

  it('scales from three to five and back to three without a failed request', async () => {
    await phase('scale 3→5→3', async () => {
      const reading = await whileReading(async () => {
        await rollout(['--scale', '5'], { LOG_LEVEL: 'warn' });
        expect(await replicas()).toHaveLength(5);
        await rollout(['--scale', '3'], { LOG_LEVEL: 'warn' });
      });
      expect(reading.requests).toBeGreaterThan(0);
      expect([reading.failures, reading.examples]).toEqual([0, []]);
    });
    expect(await replicas()).toHaveLength(3);
  }, 600_000);

  it.skipIf(onSqlite)(
    'answers 503 through the proxy within about MEILI_TIMEOUT_MS while the engine hangs, and serves again once it answers',
    async () => {
      const engine = (await compose(['ps', '-q', 'meilisearch'])).stdout.trim();
      await phase('engine hung', async () => {
        const paused = await run('docker', ['pause', engine]);
        expect([paused.code, paused.stderr]).toEqual([0, '']);
        const answers = [];
        try {
          // Pages no other phase asks for: a replica's answer cache cannot hold them.
          for (const page of [2, 3, 4]) {
            const began = performance.now();
            const res = await get(`/quotes?limit=13&page=${page}`);
            const body = (await res.json()) as { error?: string };
            answers.push({
              status: res.status,
              error: body.error,
              seconds: (performance.now() - began) / 1000,
            });
          }
        } finally {
          await run('docker', ['unpause', engine]);
        }
        console.log(`[compose] while the engine hung: ${JSON.stringify(answers)}`);
        // The replica gives up at MEILI_TIMEOUT_MS (2 s); the proxy must not then wait as long again
        // on another replica of the same engine.
        for (const { status, error, seconds } of answers) {
          expect({ status, error }).toEqual({ status: 503, error: 'service_unavailable' });
          expect(seconds).toBeLessThan(3);
        }
        await waitFor(
          'an answer once the engine runs again',
          async () => (await get('/quotes?limit=13&page=5')).status === 200,
          60_000,
        );
      });
    },
    300_000,
  );

  it('limits one client to RATE_LIMIT_MAX a minute across three replicas (rate-limit script through the proxy)', async () => {
    await phase('k6 rate-limit', async () => {
      await rollout([], { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '20' });
      // The script measures the limiter and gives up on any other answer to its first request: it
      // starts once every rolled-out replica serves quotes, i.e. after six answers of 200 in a
      // row through the round-robin proxy (these count in this minute only; the script waits for
      // the next one). A first request of a replica once waited past the engine timeout here.
      let inARow = 0;
      await waitFor(
        'six quotes in a row through the proxy after the rollout',
        async () => {
          inARow = (await get('/quotes?limit=1&fields=id')).status === 200 ? inARow + 1 : 0;
          return inARow >= 6;
        },
        60_000,
      );
      const result = await k6('loadtest/rate-limit.ts', { LIMIT: '20' });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).not.toContain('✗');
    });
  }, 600_000);
});
