/**
 * Configuration of the k6 scripts. Everything comes from `__ENV` (`k6 run -e NAME=value` or the
 * process environment), with defaults that target a local service started with `npm start`.
 * A bad value stops the script in the init context with a message naming the variable.
 */
import encoding from 'k6/encoding';
import { parseDuration } from './duration.ts';

/** The raw value of a variable, or the fallback when it is unset or blank. */
export function env(name: string, fallback: string): string {
  const value = __ENV[name];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

/** An integer variable within [min, max]. */
export function envInt(name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env(name, String(fallback));
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return n;
}

/** A non-negative number variable (rates, fractions, milliseconds). */
export function envNumber(name: string, fallback: number): number {
  const raw = env(name, String(fallback));
  const n = /^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(n)) throw new Error(`${name} must be a non-negative number, got '${raw}'`);
  return n;
}

/** A k6 duration (`90s`, `5m`, `1h30m`), returned as written (k6 syntax) and in seconds. */
export function envDuration(name: string, fallback: string): { text: string; seconds: number } {
  const text = env(name, fallback);
  return { text, seconds: parseDuration(name, text) };
}

/** Where the service is and how to authenticate against it. */
export interface Target {
  /** Without trailing slash. */
  baseUrl: string;
  /** Headers sent with every quote request: Basic credentials or `X-Bypass-Auth: true`. */
  headers: Record<string, string>;
  /** How requests authenticate, for summaries (never the credentials themselves). */
  auth: string;
}

/**
 * BASE_URL (default http://127.0.0.1:3000). Authentication: `BYPASS=true` sends
 * `X-Bypass-Auth: true`; otherwise Basic with AUTH_USER/AUTH_PASS, which default to the
 * service's development user `dev`/`dev` (present only outside production).
 */
export function target(): Target {
  const baseUrl = env('BASE_URL', 'http://127.0.0.1:3000').replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s]+$/.test(baseUrl)) {
    throw new Error(`BASE_URL must be an http:// or https:// URL, got '${baseUrl}'`);
  }
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (env('BYPASS', 'false').toLowerCase() === 'true') {
    headers['X-Bypass-Auth'] = 'true';
    return { baseUrl, headers, auth: 'bypass (X-Bypass-Auth: true)' };
  }
  const user = env('AUTH_USER', 'dev');
  const pass = env('AUTH_PASS', 'dev');
  headers.Authorization = `Basic ${encoding.b64encode(`${user}:${pass}`)}`;
  return { baseUrl, headers, auth: `basic (user ${user})` };
}

/** Directory handleSummary writes into (must exist; k6 does not create it). */
export function resultsDir(): string {
  return env('RESULTS_DIR', 'loadtest/results').replace(/\/+$/, '');
}

/** Latency and error thresholds shared by the load scripts. */
export interface Limits {
  p95Ms: number;
  p99Ms: number;
  /** Highest accepted share of failed requests (0..1). */
  errorRate: number;
}

/** P95_MS (default 100), P99_MS (default 250), ERROR_RATE (default 0.01). */
export function limits(): Limits {
  const errorRate = envNumber('ERROR_RATE', 0.01);
  if (errorRate > 1) throw new Error(`ERROR_RATE must be a fraction from 0 to 1, got '${errorRate}'`);
  return { p95Ms: envNumber('P95_MS', 100), p99Ms: envNumber('P99_MS', 250), errorRate };
}

/**
 * Trend statistics every summary shows; p(99) is not in k6's default list, and `count` tells an
 * empty trend (a phase that never ran) from a fast one.
 */
export const TREND_STATS = ['count', 'avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'];
