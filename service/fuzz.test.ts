/**
 * Fuzzing the query edge: thousands of generated malformed query strings (seeded, so a failure
 * replays) must never produce a 5xx, and every 4xx must be the contract's Error object. On both
 * engines: the same requests, so the Meilisearch adapter meets every odd value the edge lets
 * through.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FILTER_NAMES, QUOTE_FIELDS, SORT_FIELDS } from './catalogue/port.ts';
import { buildFixtureCatalogue, errorOf, fixtureApp, get } from './test-app.ts';
import { FIXTURE_QUOTES } from './test-support/fixtures.ts';
import { buildMeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

/** mulberry32: a tiny seeded PRNG, so every run sends the same requests. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = 20261122;
let random = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const int = (max: number) => Math.floor(random() * max);

const NAMES = [
  ...FILTER_NAMES,
  'sort',
  'order',
  'page',
  'limit',
  'fields',
  'orderby',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'author[]',
  'author.name',
  'AUTHOR',
  '',
  '%00',
  '%',
  'a%2',
  'x'.repeat(300),
];
const BAD_ENCODINGS = [
  '%',
  '%%',
  '%G1',
  '%1',
  '%E0%A4',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%F4%90%80%80',
  '%80',
  'a%ZZb',
];
const UNICODE = [
  'Brontë',
  'Søren',
  'É',
  'e\u0301',
  '😀',
  '𝄞',
  '\u202Eevil',
  '\u0000',
  '\uFEFF',
  'ǅ',
  'ﬁ',
  '中文',
  '\t',
  '\n',
];

function value(): string {
  switch (int(9)) {
    case 0:
      return pick(BAD_ENCODINGS);
    case 1:
      return 'v'.repeat(pick([199, 200, 201, 1_000, 5_000, 9_000]));
    case 2:
      return encodeURIComponent(pick(UNICODE).repeat(1 + int(3)));
    case 3:
      return pick(UNICODE);
    case 4:
      return pick(['', '+', '%20', ',', ',,', 'a,', ',a', '=', '==', '&']);
    case 5:
      return String(
        pick([-1, 0, 1, 7, 100, 101, 1e9, 1e9 + 1, 2 ** 53, 1.5, Number.NaN, Number.POSITIVE_INFINITY]),
      );
    case 6:
      return Array.from({ length: 1 + int(4) }, () =>
        pick([...SORT_FIELDS, ...QUOTE_FIELDS, 'asc', 'DESC', 'x']),
      ).join(pick([',', '%2C', '+', ',,']));
    case 7:
      return String.fromCodePoint(...Array.from({ length: 1 + int(8) }, () => int(0x2ffff)))
        .replace(/[\uD800-\uDFFF]/gu, '')
        .replace(/[&#%]/g, '');
    default:
      return pick(['jane+austen', 'aust', 'romance', 'lyric', 'id', 'author', 'asc', '2', '5', 'id,author']);
  }
}

function queryString(): string {
  const pairs = Array.from({ length: 1 + int(6) }, () => {
    const name = pick(NAMES);
    switch (int(6)) {
      case 0:
        return name;
      case 1:
        return `${name}=${value()}=${value()}`;
      case 2:
        return `${name}=${value()}&${name}=${value()}`;
      default:
        return `${name}=${value()}`;
    }
  });
  return pairs.join(pick(['&', '&', '&', '&&', '&;']));
}

const PATHS = ['/quotes', '/quotes/random', '/quotes/7', '/api/v1/quotes', '/quotes/abc', '/quotes/%E0%A4'];

/** The fuzz suite on one engine; `open` builds the fixture catalogue and an app over it. */
function describeFuzz(engine: string, open: () => Promise<{ app: FastifyInstance; close(): Promise<void> }>) {
  describe(`fuzzed query strings (${engine})`, () => {
    let app: FastifyInstance;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ app, close } = await open());
      random = prng(SEED);
    });
    afterAll(async () => {
      await close?.();
    });

    it('never answer 5xx, and every 4xx is the Error object', async () => {
      const statuses = new Map<number, number>();
      const rules = new Set<string>();
      const requests = 1_500;
      for (let i = 0; i < requests; i++) {
        const url = `${pick(PATHS)}?${queryString()}`;
        const response = await get(app, url);
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        expect(response.statusCode, url).toBeLessThan(500);
        expect(response.headers['content-type'], url).toBe('application/json; charset=utf-8');
        if (response.statusCode >= 400) {
          const body = errorOf(response);
          expect(['bad_request', 'not_found'], url).toContain(body.error);
          expect(body.details.length, url).toBeGreaterThan(0);
          expect(body.details.length, url).toBeLessThan(400);
          rules.add(body.details.replace(/'.*$/s, '').replace(/[0-9]+/g, 'N'));
        } else {
          expect(response.statusCode, url).toBe(200);
        }
      }
      // The generator mostly builds malformed queries: most answers are 400s.
      expect(statuses.get(400) ?? 0).toBeGreaterThan(requests * 0.6);
      // …and they reach many different rules, not one early rejection.
      expect(rules.size).toBeGreaterThan(12);
    });
  });
}

describeFuzz('sqlite', async () => {
  const catalogue = await buildFixtureCatalogue();
  const app = await fixtureApp(catalogue.path);
  return {
    app,
    async close() {
      await app.close();
      catalogue.remove();
    },
  };
});

const SUITE = 'fuzz';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) {
  const reason = announceSkip(SUITE, source.skip);
  describe.skip(`fuzzed query strings (meilisearch) (skipped: ${reason})`, () => {
    it('needs the engine', () => {});
  });
} else {
  describeFuzz('meilisearch', async () => {
    const engine: MeiliEngine = await source.start(SUITE);
    try {
      const catalogue = await buildMeiliCatalogue(engine, FIXTURE_QUOTES);
      const app = await fixtureApp('', catalogue.env);
      return {
        app,
        async close() {
          await app.close();
          await catalogue.remove();
          await engine.stop();
        },
      };
    } catch (error) {
      await engine.stop();
      throw error;
    }
  });
}
