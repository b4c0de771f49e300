/**
 * Test harness for the HTTP suites: a real SQLite catalogue built from FIXTURE_QUOTES in a temp
 * directory, and apps built by the production factory over it. Not a test file itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { type AppDeps, buildApp } from './app.ts';
import {
  type Filters,
  matches,
  normaliseFilters,
  type Quote,
  type RawFilters,
  type SortKey,
} from './catalogue/port.ts';
import { createSqliteBuilder } from './catalogue/sqlite/builder.ts';
import { loadConfig } from './config.ts';
import { FIXTURE_QUOTES } from './test-support/fixtures.ts';
import { compareQuotes } from './test-support/reference.ts';

/** The header that skips authentication under the default AUTH_BYPASS=allow. */
export const BYPASS = { 'x-bypass-auth': 'true' } as const;

/** An Authorization header value for HTTP Basic. */
export const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;

/** A fixture catalogue file in its own temp directory. */
export interface FixtureCatalogue {
  path: string;
  version: string;
  remove(): void;
}

/** Builds FIXTURE_QUOTES (or `quotes`) into a new SQLite catalogue with the real builder. */
export async function buildFixtureCatalogue(
  quotes: readonly Quote[] = FIXTURE_QUOTES,
): Promise<FixtureCatalogue> {
  const dir = mkdtempSync(join(tmpdir(), 'quotes-service-test-'));
  const path = join(dir, 'quotes.db');
  const builder = await createSqliteBuilder({ path });
  await builder.add(quotes);
  const { version } = await builder.commit();
  return { path, version, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * An app over `sqlitePath` configured from `env` exactly as the server would be. The suites
 * send thousands of requests from one address, so the per-minute limit is raised unless a test
 * sets RATE_LIMIT_MAX itself (the rate-limit suites do).
 */
export function fixtureApp(
  sqlitePath: string,
  env: Record<string, string> = {},
  deps: AppDeps = {},
): Promise<FastifyInstance> {
  return buildApp(
    loadConfig({ SQLITE_PATH: sqlitePath, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000000', ...env }),
    deps,
  );
}

/** Writes raw bytes to a server on 127.0.0.1 and reads until it closes the socket. */
export function rawHttp(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
  });
}

/** GET with the bypass header: the quickest way past authentication. */
export function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers: { ...BYPASS, ...headers } });
}

/** The contract's reference answer: fixture quotes matching raw filter values, in contract order. */
export function expected(raw: RawFilters, sort: readonly SortKey[] = []): Quote[] {
  const filters: Filters = normaliseFilters(raw);
  return FIXTURE_QUOTES.filter((q) => matches(q, filters)).sort((a, b) => compareQuotes(a, b, sort));
}

/** The Error object of a response; throws when the body or content-type break the contract. */
export function errorOf(response: LightMyRequestResponse): { code: number; error: string; details: string } {
  const body = response.json() as { code: number; error: string; details: string };
  if (Object.keys(body).sort().join() !== 'code,details,error' || body.code !== response.statusCode) {
    throw new Error(`not an Error object for ${response.statusCode}: ${response.body}`);
  }
  if (response.headers['content-type'] !== 'application/json; charset=utf-8') {
    throw new Error(`error content-type is ${response.headers['content-type']}`);
  }
  return body;
}
