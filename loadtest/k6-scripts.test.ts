/**
 * The k6 scripts run against the real service, under the Node harness of `k6-shim/` (k6 itself
 * cannot be installed here): their requests, checks, thresholds and summaries are exercised,
 * so a script that disagrees with the service (or the contract) fails here, not on a user's machine.
 * The harness emulates k6's API, not its scheduling: arrival rates and durations are not timed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announceSkip } from '../service/test-support/suites.ts';
import { type Child, freePort, start, waitForHttp } from './bench/processes.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'k6-scripts-'));
const USER = 'k6';
const PASSWORD = `k6-${process.pid}`;
let service: Child;
let baseUrl: string;

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  // A fresh SQLITE_PATH: the service builds it from the bundled data set on first start.
  service = start('service', process.execPath, [join(ROOT, 'service/server.ts')], {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    SEARCH_BACKEND: 'sqlite',
    SQLITE_PATH: join(dir, 'quotes.db'),
    AUTH_USERS: `${USER}:${PASSWORD}`,
    RATE_LIMIT_MAX: '100000',
    RATE_LIMIT_STORE: 'memory',
    LOG_LEVEL: 'warn',
  });
  await waitForHttp(service, `${baseUrl}/ready`);
});

afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function k6(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', join(ROOT, 'loadtest/k6-shim/register.ts'), join(ROOT, 'loadtest/k6-shim/run.ts'), script],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          BASE_URL: baseUrl,
          AUTH_USER: USER,
          AUTH_PASS: PASSWORD,
          RESULTS_DIR: dir,
          ...env,
        },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('k6 scripts against the service', () => {
  it('smoke.ts passes every check and writes its JSON and markdown summaries', async () => {
    const { code, stdout, stderr } = await k6('loadtest/smoke.ts', {});
    expect(stdout).not.toContain('✗');
    expect(code, stdout + stderr).toBe(0);
    expect(stdout).toContain('result: PASS');
    const report = JSON.parse(readFileSync(join(dir, 'smoke.json'), 'utf8'));
    expect(report.passed).toBe(true);
    expect(report.checks.length).toBeGreaterThan(30);
    expect(report.checks.every((c: { fails: number }) => c.fails === 0)).toBe(true);
    expect(readFileSync(join(dir, 'smoke.md'), 'utf8')).toMatch(/^# k6 smoke: PASS/);
  });

  it('smoke.ts stops in setup, naming the status, when the credentials are wrong', async () => {
    const { code, stderr } = await k6('loadtest/smoke.ts', { AUTH_PASS: 'wrong' });
    expect(code).toBe(107);
    expect(stderr).toContain(`cannot sample the catalogue: GET ${baseUrl}/quotes answered 401`);
  });

  it('throughput.ts: every request of the mix passes its status and shape checks', async () => {
    const { code, stdout, stderr } = await k6('loadtest/throughput.ts', { K6_SHIM_ITERATIONS: '300' });
    expect(code, stdout + stderr).toBe(0);
    expect(stdout).toContain('✓ status is 200: 100.00% (300/300)');
    expect(stdout).toContain('✓ body has the expected shape: 100.00% (300/300)');
    const report = JSON.parse(readFileSync(join(dir, 'throughput.json'), 'utf8'));
    // Every kind of the mix was drawn and timed.
    for (const kind of ['default', 'filter', 'like', 'sort', 'deep', 'id', 'random', 'v1']) {
      expect(report.metrics[`latency_${kind}`]?.values.count, kind).toBeGreaterThan(0);
    }
  });

  it('throughput.ts fails its thresholds (exit 99) when the latency limit cannot be met', async () => {
    const { code, stdout } = await k6('loadtest/throughput.ts', { K6_SHIM_ITERATIONS: '20', P95_MS: '0' });
    expect(code).toBe(99);
    expect(stdout).toContain('✗ http_req_duration{scenario:throughput} p(95)<0');
  });

  if (process.env.LOADTEST_SLOW !== '1')
    announceSkip(
      import.meta.url,
      'rate-limit.ts over a real minute: set LOADTEST_SLOW=1 (up to 2 min; the compose test runs it too)',
    );
  it.runIf(process.env.LOADTEST_SLOW === '1')(
    'rate-limit.ts: exactly LIMIT requests a minute, then 429 until the next minute (LOADTEST_SLOW=1, up to 2 min)',
    { timeout: 200_000 },
    async () => {
      const port = await freePort();
      const limited = start('limited service', process.execPath, [join(ROOT, 'service/server.ts')], {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        SQLITE_PATH: join(dir, 'quotes.db'),
        AUTH_USERS: `${USER}:${PASSWORD}`,
        RATE_LIMIT_MAX: '7',
        LOG_LEVEL: 'warn',
      });
      try {
        await waitForHttp(limited, `http://127.0.0.1:${port}/health`);
        const { code, stdout, stderr } = await k6('loadtest/rate-limit.ts', {
          BASE_URL: `http://127.0.0.1:${port}`,
          LIMIT: '7',
        });
        expect(code, stdout + stderr).toBe(0);
        expect(stdout).not.toContain('✗');
      } finally {
        await limited.stop();
      }
    },
  );
});
