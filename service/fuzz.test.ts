/**
 * Fuzzing the query edge: thousands of generated malformed query strings (seeded, so a failure
 * replays) must never produce a 5xx, and every 4xx must be the contract's Error object.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILTER_NAMES, QUOTE_FIELDS, SORT_FIELDS } from './catalogue/port.ts';
import { buildFixtureCatalogue, errorOf, type FixtureCatalogue, fixtureApp, get } from './test-app.ts';

let catalogue: FixtureCatalogue;
let app: FastifyInstance;

beforeAll(async () => {
  catalogue = await buildFixtureCatalogue();
  app = await fixtureApp(catalogue.path);
});
afterAll(async () => {
  await app?.close();
  catalogue?.remove();
});

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

const random = prng(20261122);
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

describe('fuzzed query strings', () => {
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
