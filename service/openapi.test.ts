/**
 * The OpenAPI document against the service it describes: every parameter's example finds quotes
 * in the bundled catalogue, and what the document's parameter schemas accept is what the service
 * accepts (checked with a JSON Schema validator on a sample of values, edge cases included).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexFile } from '../indexer/index-file.ts';
import { loadConfig } from './config.ts';
import { fixtureApp, get } from './test-app.ts';

interface Parameter {
  name: string;
  in: 'query' | 'path';
  required?: boolean;
  example?: unknown;
  schema: Record<string, unknown>;
}
interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
  components: { schemas: Record<string, unknown> };
}

/** The data set that ships with the repository, which `npm start` serves on a fresh clone. */
const BUNDLED_DATA = fileURLToPath(new URL('../data/quotes.json', import.meta.url));

let dir: string;
let app: FastifyInstance;
let doc: Document;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quotes-openapi-test-'));
  const config = loadConfig({ SQLITE_PATH: join(dir, 'quotes.db'), LOG_LEVEL: 'silent' });
  await indexFile(BUNDLED_DATA, config);
  app = await fixtureApp(config.sqlitePath);
  doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(async () => {
  await app?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The GET operations that take parameters, with their parameters. */
function operations(): [string, Parameter[]][] {
  return Object.entries(doc.paths)
    .map(([path, methods]): [string, Parameter[]] => [path, methods.get?.parameters ?? []])
    .filter(([, parameters]) => parameters.length > 0);
}

/** A request URL from parameter values, serialised as the document says (form, exploded). */
function url(path: string, parameters: Parameter[], values: Map<string, unknown>): string {
  let target = path;
  const query: string[] = [];
  for (const parameter of parameters) {
    if (!values.has(parameter.name)) continue;
    const value = values.get(parameter.name);
    if (parameter.in === 'path') {
      target = target.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
      continue;
    }
    for (const item of Array.isArray(value) ? value : [value]) {
      query.push(`${parameter.name}=${encodeURIComponent(String(item))}`);
    }
  }
  return query.length === 0 ? target : `${target}?${query.join('&')}`;
}

/** How many quotes an answer holds, whatever its envelope. */
function quotesIn(body: Record<string, unknown>): number {
  if (typeof body.total_quotes === 'number') return body.total_quotes;
  if (Array.isArray(body.items)) return body.items.length;
  if (Array.isArray(body.data)) return body.data.length;
  return Object.keys(body).length > 0 ? 1 : 0;
}

describe('parameter examples', () => {
  it('every parameter has one, and each, alone or all together, finds quotes in the bundled catalogue', async () => {
    const operationsSeen: string[] = [];
    for (const [path, parameters] of operations()) {
      operationsSeen.push(path);
      const examples = new Map<string, unknown>();
      for (const parameter of parameters) {
        expect(parameter.example, `${path} ${parameter.name}`).toBeDefined();
        examples.set(parameter.name, parameter.example);
      }
      const required = parameters.filter((p) => p.required === true).map((p) => p.name);
      const requests = [
        ...parameters.map(
          (p) => new Map([...examples].filter(([name]) => name === p.name || required.includes(name))),
        ),
        examples,
      ];
      for (const values of requests) {
        const target = url(path, parameters, values);
        const response = await get(app, target);
        expect(response.statusCode, `${target}: ${response.body}`).toBe(200);
        expect(quotesIn(response.json()), target).toBeGreaterThan(0);
      }
    }
    expect(operationsSeen.sort()).toEqual([
      '/api/v1/quotes',
      '/authors',
      '/authors/{id}',
      '/quotes',
      '/quotes/facets',
      '/quotes/random',
      '/quotes/today',
      '/quotes/{id}',
      '/works',
      '/works/{id}',
    ]);
  });
});

/** A random generator with a seed, so that a failure can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Characters at the edges of the text rules: marks, spaces, compatibility forms, NUL, astral letters. */
const EDGE_CHARACTERS = [
  'a',
  'Z',
  '5',
  '٣',
  'ß',
  'İ',
  'ㄱ',
  '\u1100',
  '𝒜',
  '😀',
  '™',
  '½',
  'Ⅻ',
  '´',
  '¨',
  '\u0301',
  '\u20dd',
  ' ',
  '\t',
  '\u00a0',
  '\u3000',
  '\u0085',
  '\ufeff',
  '-',
  "'",
  ',',
  '+',
  '%',
  '\u0000',
];

const TEXT_SAMPLES = [
  'Jane Austen',
  'jane aus',
  ' ',
  '\u0301',
  ' \u0301\t',
  '´',
  '¨ ´',
  '\u00a0\u3000',
  '™',
  '½',
  'a\u0000',
  '\u0000',
  '\ufeff',
  '\u0085',
  '-',
  "'",
  'x'.repeat(200),
  'x'.repeat(201),
  '𝒜'.repeat(200),
  '𝒜'.repeat(201),
];
const INTEGER_SAMPLES = ['1', '7', '0', '01', '-1', '1.5', '1e3', 'abc', '+1', '12345678901234567890'];
const LIMIT_SAMPLES = ['1', '100', '101', '0', '05', 'ten'];
const FIELD_SAMPLES = [
  'id',
  'id,author,quote',
  'id,id',
  'quote_length,source',
  'ID',
  'id,',
  ',id',
  'id,,author',
  'nope',
  Array(67).fill('id').join(','),
  Array(68).fill('id').join(','),
];
const SORT_SAMPLES = [
  'id',
  'author,publish_date',
  'source',
  'ID',
  'id,',
  'id,,author',
  Array(20).fill('genre').join(','),
  Array(21).fill('genre').join(','),
];
const DIRECTION_SAMPLES = ['asc', 'desc', 'ASC', 'Desc', 'up', 'asc,desc', 'desc '];
const FACET_SAMPLES = [
  'genre',
  'author',
  'work',
  'category',
  'genre,category',
  'work,genre,work',
  'Genre',
  'title',
  'genre,',
  ',genre',
  'genre category',
  'author,work,category,genre,quote',
];
const ORDERBY_SAMPLES = ['author', 'work', 'genre', 'publish_date', 'quote_length', 'id', 'AUTHOR'];

const LENGTH_SAMPLES = ['0', '1', '50', '1000000', '1000001', '01', '-1', '1.5', 'abc', '12345678'];
const DATE_SAMPLES = [
  '1813',
  '1813-01',
  '1813-01-28',
  '0000',
  '0000-02-29',
  '1900-02-29',
  '2000-02-29',
  '2024-02-29',
  '2023-02-29',
  '1813-04-30',
  '1813-04-31',
  '1813-12-31',
  '1813-13',
  '1813-00',
  '1813-01-00',
  '1813-1',
  '18130',
  '813',
  ' 1813',
  'abc',
];
const COUNT_SAMPLES = ['1', '3', '50', '51', '0', '01', '-1', '1.5', 'abc'];
const LANGUAGE_SAMPLES = ['en', 'FR', 'De', 'la', 'xx', 'e', 'eng', 'e n', 'é', '1'];
const DIRECTORY_SORT_SAMPLES = ['name', 'title', 'quote_count', 'id', 'ID', 'count', '', 'name,id'];
const EXCLUDE_SAMPLES = [
  '1',
  '2,3',
  '0',
  '01',
  '1,,2',
  '1,',
  '-1',
  'a',
  Array.from({ length: 100 }, (_, i) => i + 1).join(','),
  Array.from({ length: 101 }, (_, i) => i + 1).join(','),
  Array.from({ length: 100 }, (_, i) => 1_000_000 + i).join(','),
];
const TEXT_PARAMETERS = ['author', 'author_like', 'work', 'work_like', 'category', 'genre'];
const INTEGER_PARAMETERS = ['id', 'author_id', 'work_id', 'page'];

/** Values to try for a parameter, by its name (and path: `sort` differs on `/api/v1/quotes`). */
function samplesFor(path: string, name: string, random: () => number): string[] {
  if (INTEGER_PARAMETERS.includes(name)) return INTEGER_SAMPLES;
  if (name === 'limit') return LIMIT_SAMPLES;
  if (TEXT_PARAMETERS.includes(name)) {
    const mixed = Array.from({ length: 150 }, () => {
      const length = 1 + Math.floor(random() * 3);
      return Array.from(
        { length },
        () => EDGE_CHARACTERS[Math.floor(random() * EDGE_CHARACTERS.length)],
      ).join('');
    });
    return [...TEXT_SAMPLES, ...mixed];
  }
  // The document cannot state the word limits of q (ten words of at most 64 characters, counted
  // once folded); the samples stay within them, the 200-character bound included.
  if (name === 'q') {
    const within = samplesFor(path, 'author', random).filter((v) => !/^(x|𝒜){200}$/u.test(v));
    return [
      ...within,
      'x'.repeat(64),
      Array(10).fill('ab').join(' '),
      Array(10).fill('x'.repeat(19)).join(' '),
      'x'.repeat(201),
    ];
  }
  if (name === 'fields') return FIELD_SAMPLES;
  if (name === 'orderby') return ORDERBY_SAMPLES;
  if (name === 'facet') return FACET_SAMPLES;
  if (name === 'sort' && (path === '/authors' || path === '/works')) return DIRECTORY_SORT_SAMPLES;
  if (name === 'sort' && path === '/quotes') return SORT_SAMPLES;
  if (name === 'order' || name === 'sort') return DIRECTION_SAMPLES;
  if (name === 'min_length' || name === 'max_length') return LENGTH_SAMPLES;
  if (name === 'published_from' || name === 'published_to') return DATE_SAMPLES;
  if (name === 'count') return COUNT_SAMPLES;
  if (name === 'language') return LANGUAGE_SAMPLES;
  if (name === 'exclude') return EXCLUDE_SAMPLES;
  if (name === 'name_like' || name === 'title_like') return samplesFor(path, 'author_like', random);
  throw new Error(`no samples for ${path} ${name}`);
}

describe('parameter schemas', () => {
  it('accept exactly what the service accepts, on a sample of values with edge cases', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: false });
    ajv.addSchema({ $id: 'document', components: doc.components });
    const random = seeded(20);
    const disagreements: string[] = [];
    let compared = 0;
    for (const [path, parameters] of operations()) {
      // Parameters are tried one at a time, beside the examples of the required ones.
      const required = new Map(
        parameters.filter((p) => p.required === true).map((p) => [p.name, p.example] as [string, unknown]),
      );
      for (const parameter of parameters) {
        const schema = JSON.parse(
          JSON.stringify(parameter.schema).replaceAll('"#/components/', '"document#/components/'),
        );
        const validate = ajv.compile(schema);
        for (const value of samplesFor(path, parameter.name, random)) {
          // A query value is text: it stands for an integer only in its canonical decimal form.
          const typed = schema.type === 'integer' || schema.items?.type === 'integer';
          const decoded = typed && /^(0|-?[1-9][0-9]*)$/.test(value) ? Number(value) : value;
          const documented = validate(schema.type === 'array' ? [decoded] : decoded);
          const values = new Map(required);
          values.set(parameter.name, parameter.in === 'path' || schema.type !== 'array' ? value : [value]);
          const response = await get(app, url(path, parameters, values));
          const accepted = response.statusCode !== 400;
          compared++;
          if (documented !== accepted) {
            disagreements.push(
              `${path} ${parameter.name}=${JSON.stringify(value)}: document ${documented ? 'accepts' : 'refuses'}, service answers ${response.statusCode} ${response.body}`,
            );
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
    expect(disagreements).toEqual([]);
  });
});
