import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { UsageError } from '../../service/command-line.ts';
import { MEILI_RUNS, parseBenchArgs } from './options.ts';
import {
  INDEXER_ENV,
  INDEXER_NODE_FLAGS,
  MEILI_SERVICE_NODE_FLAGS,
  SERVICE_NODE_FLAGS,
} from './processes.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));

const ROOT = '/repo';

describe('parseBenchArgs', () => {
  it('takes the Meilisearch backend, with a report file of its own, and refuses another', () => {
    const options = parseBenchArgs(['--backend', 'meilisearch'], ROOT, '/elsewhere');
    expect(options).toMatchObject({
      backend: 'meilisearch',
      out: join(ROOT, 'loadtest/results/latest-meilisearch.json'),
    });
    expect(() => parseBenchArgs(['--backend', 'elastic'], ROOT)).toThrow(
      new UsageError("--backend must be sqlite or meilisearch, got 'elastic'"),
    );
  });

  it('defaults to the full benchmark', () => {
    expect(parseBenchArgs([], ROOT, '/elsewhere')).toEqual({
      backend: 'sqlite',
      count: 200_000,
      duration: 10,
      connections: 50,
      mixRate: 500,
      seed: 1,
      quick: false,
      out: join(ROOT, 'loadtest/results/latest.json'),
      cacheDir: join(ROOT, 'loadtest/results/cache'),
      redis: true,
      check: false,
      only: new Set(MEILI_RUNS),
    });
  });

  it('keeps an engine directory and picks runs for the Meilisearch backend only', () => {
    const options = parseBenchArgs(
      ['--backend', 'meilisearch', '--engine-dir', 'engine', '--only', 'random,today'],
      ROOT,
      '/home/someone',
    );
    expect(options).toMatchObject({ engineDir: '/home/someone/engine', only: new Set(['random', 'today']) });
    expect(() => parseBenchArgs(['--backend', 'meilisearch', '--only', 'random,all'], ROOT)).toThrow(
      new UsageError(`--only takes runs among ${MEILI_RUNS.join(', ')}, got 'all'`),
    );
    expect(() => parseBenchArgs(['--engine-dir', 'engine'], ROOT)).toThrow(
      new UsageError('--engine-dir and --only go with --backend meilisearch'),
    );
  });

  it('makes --quick small and short unless told otherwise', () => {
    expect(parseBenchArgs(['--quick'], ROOT)).toMatchObject({
      quick: true,
      count: 10_000,
      duration: 2,
      mixRate: 100,
    });
    expect(parseBenchArgs(['--quick', '--count', '1000', '--duration=1'], ROOT)).toMatchObject({
      count: 1000,
      duration: 1,
    });
  });

  it('resolves relative paths against the working directory', () => {
    const options = parseBenchArgs(
      ['--out', 'x/report.json', '--cache-dir', '/tmp/c', '--no-redis'],
      ROOT,
      '/home/someone',
    );
    expect(options).toMatchObject({ out: '/home/someone/x/report.json', cacheDir: '/tmp/c', redis: false });
  });

  it('rejects bad values and unknown options with a usage error', () => {
    expect(() => parseBenchArgs(['--count', '0'], ROOT)).toThrow(
      new UsageError("--count must be an integer from 1 to 10000000, got '0'"),
    );
    expect(() => parseBenchArgs(['--duration', '2s'], ROOT)).toThrow(UsageError);
    expect(() => parseBenchArgs(['--fast'], ROOT)).toThrow(UsageError);
    expect(() => parseBenchArgs(['extra'], ROOT)).toThrow(UsageError);
    expect(parseBenchArgs(['--help'], ROOT)).toBe('help');
  });
});

describe('the processes the benchmark starts', () => {
  it('run with the V8 flags of npm start and npm run index, the image, and the service of the Compose stack', () => {
    const flags = SERVICE_NODE_FLAGS.join(' ');
    const pkg = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as {
      scripts: { start: string; index: string };
    };
    expect(pkg.scripts.start).toBe(`node ${flags} service/server.ts`);
    const indexEnv = Object.entries(INDEXER_ENV).map(([name, value]) => `${name}=${value} `);
    expect(pkg.scripts.index).toBe(`${indexEnv.join('')}node ${INDEXER_NODE_FLAGS.join(' ')} indexer/cli.ts`);
    expect(readFileSync(join(REPOSITORY, 'Dockerfile'), 'utf8')).toContain(
      `CMD ["node", ${SERVICE_NODE_FLAGS.map((f) => `"${f}"`).join(', ')}, "service/server.ts"]`,
    );
    const compose = parse(readFileSync(join(REPOSITORY, 'docker-compose.yml'), 'utf8')) as {
      services: { service: { command: string[] }; indexer: { environment: Record<string, string> } };
    };
    expect(compose.services.indexer.environment).toMatchObject({
      ...INDEXER_ENV,
      NODE_OPTIONS: INDEXER_NODE_FLAGS.join(' '),
    });
    expect(compose.services.service.command.slice(-2 - MEILI_SERVICE_NODE_FLAGS.length)).toEqual([
      'node',
      ...MEILI_SERVICE_NODE_FLAGS,
      'service/server.ts',
    ]);
  });
});
