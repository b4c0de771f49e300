/**
 * Apps over catalogues on either engine, for HTTP suites that run unchanged on SQLite and on a
 * real Meilisearch: each catalogue is built by the engine's real builder and served by an app
 * made by the production factory. The catalogues the suites share: the bundled one
 * (`data/quotes.json`) and a generated one (accents, apostrophes, hyphens, CJK). Not a test
 * file itself.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { generateQuotes } from '../../indexer/generate.ts';
import { type AppDeps, buildApp } from '../app.ts';
import type { Quote } from '../catalogue/port.ts';
import { loadConfig } from '../config.ts';
import { buildFixtureCatalogue } from '../test-app.ts';
import { buildMeiliCatalogue } from './meilisearch-catalogue.ts';
import type { MeiliEngine, MeiliEngineSource } from './meilisearch-engine.ts';

/** How a suite gets catalogues served on one engine. */
export interface EngineBackend {
  name: string;
  /** Set when the engine is absent: the suite registers as skipped, with this reason. */
  skip?: string;
  start(): Promise<void>;
  /** Builds `quotes` into a live catalogue of its own; the variables of a service reading it. */
  serve(quotes: readonly Quote[]): Promise<{ env: Record<string, string>; remove(): Promise<void> }>;
  stop(): Promise<void>;
}

export function sqliteBackend(): EngineBackend {
  return {
    name: 'sqlite',
    async start() {},
    async serve(quotes) {
      const catalogue = await buildFixtureCatalogue(quotes);
      return { env: { SQLITE_PATH: catalogue.path }, remove: async () => catalogue.remove() };
    },
    async stop() {},
  };
}

export function meiliBackend(source: MeiliEngineSource, suite: string): EngineBackend {
  let engine: MeiliEngine | undefined;
  if ('skip' in source) {
    return {
      name: 'meilisearch',
      skip: source.skip,
      start: async () => {},
      serve: () => Promise.reject(new Error(source.skip)),
      stop: async () => {},
    };
  }
  return {
    name: 'meilisearch',
    async start() {
      engine = await source.start(suite);
    },
    serve: (quotes) => buildMeiliCatalogue(engine as MeiliEngine, quotes),
    async stop() {
      await engine?.stop();
    },
  };
}

/** An app reading the catalogue `env` names, with a limit no suite reaches. */
export function engineApp(env: Record<string, string>, deps: AppDeps = {}): Promise<FastifyInstance> {
  return buildApp(loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000000', ...env }), deps);
}

const codePoints = (text: string) => Array.from(text).length;

/** The bundled catalogue as the indexer stores it (quote_length computed). */
export function bundledQuotes(): Quote[] {
  const path = fileURLToPath(new URL('../../data/quotes.json', import.meta.url));
  const records = JSON.parse(readFileSync(path, 'utf8')) as Omit<Quote, 'quote_length'>[];
  return records.map((r) => ({ ...r, quote_length: codePoints(r.quote) }));
}

/** A generated catalogue (accents, apostrophes, hyphens, CJK), deterministic in its seed. */
export function generatedQuotes(count: number, seed: number): Quote[] {
  return [...generateQuotes(count, seed)].map((q) => ({ ...q, quote_length: codePoints(q.quote) }));
}
