/**
 * The service's environment (docs/configuration.md#configuration), parsed and validated once. The
 * indexer reads the same module, so both always target the same catalogue.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import {
  DEFAULT_ENGINE_CONNECTIONS,
  DEFAULT_SEARCH_TIMEOUT_MS,
  MAX_DEEP_READS,
  MAX_SEARCH_TIMEOUT_MS,
} from './catalogue/meilisearch/request.ts';
import { CodedError } from './coded-error.ts';

export type SearchBackend = 'sqlite' | 'meilisearch';
export type RateLimitStore = 'memory' | 'redis';
export type FailMode = 'open' | 'closed';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  /**
   * NODE_ENV is anything but unset, `development` or `test`: no development default user. A
   * misspelt `Production` or a `staging` must not open the service with a known password.
   */
  production: boolean;
  searchBackend: SearchBackend;
  sqlitePath: string;
  /** Largest size of the catalogue texts held in memory by the embedded engine, in bytes. */
  sqliteTextMemoryBytes: number;
  meili: {
    host: string;
    /** Key the service searches with (a search-only key in production). */
    apiKey: string | undefined;
    /** Key the indexer writes with (MEILI_ADMIN_KEY, else MEILI_API_KEY). */
    adminKey: string | undefined;
    index: string;
    /** Upper bound of one engine request; past it the request answers 503. */
    timeoutMs: number;
    /** Deep pages one instance has the engine read at once; more answer 503 with Retry-After. */
    deepReads: number;
    /** Connections one instance keeps to the engine: the requests it works on at once. */
    connections: number;
  };
  rateLimit: {
    max: number;
    store: RateLimitStore;
    redisUrl: string | undefined;
    fail: FailMode;
  };
  auth: {
    /** name → password. */
    users: Map<string, string>;
    bypass: 'allow' | 'deny';
    /** True when `users` holds only the development default user. */
    usingDevelopmentUser: boolean;
  };
  /** Fastify's trustProxy: false, true, a hop count, or addresses/CIDRs. */
  trustProxy: boolean | number | string[];
  logLevel: LogLevel;
  /** Origins browsers may call from (CORS_ORIGINS): any (`*`), a list, or none (no CORS headers). */
  corsOrigins: CorsOrigins;
}

/** `*`, a non-empty list of serialised origins (`https://app.example.com`), or undefined (off). */
export type CorsOrigins = '*' | readonly string[] | undefined;

/** Values of NODE_ENV (trimmed, any case) under which the development user may exist. */
const DEVELOPMENT_ENVIRONMENTS = new Set(['', 'development', 'test']);

/** Development-only credentials, used when no users are configured outside production. */
export const DEVELOPMENT_USER = { name: 'dev', password: 'dev' } as const;

/** A bad environment variable; the message is the one line printed before exiting. */
export class ConfigError extends CodedError {
  override name = 'ConfigError';
  readonly code = 'invalid_configuration';
}

type Env = Record<string, string | undefined>;

/** Parses the environment. Throws {@link ConfigError} naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const production = !DEVELOPMENT_ENVIRONMENTS.has(env.NODE_ENV?.trim().toLowerCase() ?? '');
  const users = parseUsers(env);
  const usingDevelopmentUser = users.size === 0 && !production;
  if (usingDevelopmentUser) users.set(DEVELOPMENT_USER.name, DEVELOPMENT_USER.password);
  const store = oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'redis'], 'memory');
  const redisUrl = optional(env, 'REDIS_URL');
  // The path, when present, is the database number (ioredis would send SELECT NaN for '/abc').
  if (
    redisUrl !== undefined &&
    !(isUrl(redisUrl, ['redis:', 'rediss:']) && /^\/?[0-9]*$/.test(new URL(redisUrl).pathname))
  ) {
    throw new ConfigError(
      `REDIS_URL must be a redis:// or rediss:// URL with a host and at most a database number (redis://host:6379/0), got '${elideBeforeLastAt(redisUrl)}'`,
    );
  }
  if (store === 'redis' && redisUrl === undefined) {
    throw new ConfigError('REDIS_URL is required when RATE_LIMIT_STORE=redis (e.g. redis://127.0.0.1:6379)');
  }
  const meiliHost = optional(env, 'MEILI_HOST') ?? 'http://127.0.0.1:7700';
  const meiliHostError = meiliHostProblem(meiliHost);
  if (meiliHostError !== undefined) throw new ConfigError(meiliHostError);
  const meiliIndex = optional(env, 'MEILI_INDEX') ?? 'quotes';
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(meiliIndex)) {
    throw new ConfigError(`MEILI_INDEX must be 1 to 200 letters, digits, '-' or '_', got '${meiliIndex}'`);
  }
  const apiKey = optional(env, 'MEILI_API_KEY');
  const deepReads = integer(env, 'MEILI_DEEP_READS', MAX_DEEP_READS, 1, 1_000);
  const connections = integer(env, 'MEILI_CONNECTIONS', DEFAULT_ENGINE_CONNECTIONS, 2, 1_000);
  // Deep pages on every connection would leave none to the cheap reads, which would wait behind them.
  if (connections <= deepReads) {
    throw new ConfigError(
      `MEILI_CONNECTIONS (${connections}) must be more than MEILI_DEEP_READS (${deepReads}), so that deep pages never hold every connection to Meilisearch`,
    );
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: parseHost(optional(env, 'HOST')),
    production,
    searchBackend: oneOf(env, 'SEARCH_BACKEND', ['sqlite', 'meilisearch'], 'sqlite'),
    sqlitePath: optional(env, 'SQLITE_PATH') ?? 'data/quotes.db',
    sqliteTextMemoryBytes: integer(env, 'SQLITE_TEXT_MEMORY_MB', 64, 0, 4095) * 1024 * 1024,
    meili: {
      host: meiliHost.replace(/\/+$/, ''),
      apiKey,
      adminKey: optional(env, 'MEILI_ADMIN_KEY') ?? apiKey,
      index: meiliIndex,
      timeoutMs: integer(env, 'MEILI_TIMEOUT_MS', DEFAULT_SEARCH_TIMEOUT_MS, 50, MAX_SEARCH_TIMEOUT_MS),
      deepReads,
      connections,
    },
    rateLimit: {
      max: integer(env, 'RATE_LIMIT_MAX', 100, 1, 1_000_000_000),
      store,
      redisUrl,
      fail: oneOf(env, 'RATE_LIMIT_FAIL', ['open', 'closed'], 'open'),
    },
    auth: {
      users,
      bypass: oneOf(env, 'AUTH_BYPASS', ['allow', 'deny'], 'allow'),
      usingDevelopmentUser,
    },
    trustProxy: parseTrustProxy(optional(env, 'TRUST_PROXY')),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    corsOrigins: parseCorsOrigins(optional(env, 'CORS_ORIGINS')),
  };
}

/**
 * CORS_ORIGINS: `*`, or origins as browsers send them in `Origin` (scheme, host, and a port only
 * when it is not the scheme's default; no path, no trailing slash), comma-separated. Browsers
 * compare the allowed origin with theirs character for character, so a value that is not already
 * in that form would never match: it is refused at start rather than silently failing every call.
 */
function parseCorsOrigins(value: string | undefined): CorsOrigins {
  if (value === undefined) return undefined;
  if (value === '*') return '*';
  const origins = value.split(',').map((item) => item.trim());
  for (const origin of origins) {
    const serialised = URL.canParse(origin) ? new URL(origin) : undefined;
    const valid =
      serialised !== undefined &&
      (serialised.protocol === 'http:' || serialised.protocol === 'https:') &&
      serialised.origin === origin;
    if (!valid) {
      const hint =
        serialised?.origin !== undefined && serialised.origin !== 'null'
          ? ` (did you mean '${serialised.origin}'?)`
          : '';
      throw new ConfigError(
        `CORS_ORIGINS must be * or comma-separated origins such as https://app.example.com (http or https, host, optional port, no path or trailing slash), got '${elideBeforeLastAt(origin)}'${hint}`,
      );
    }
  }
  return [...new Set(origins)];
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * What is wrong with a MEILI_HOST value, as the one line that stops the program, or undefined.
 * Also read by the compose key step (deploy/meili-keys.ts), which takes MEILI_HOST on its own.
 */
export function meiliHostProblem(value: string): string | undefined {
  if (!isUrl(value, ['http:', 'https:'])) {
    return `MEILI_HOST must be an http:// or https:// URL with a host, got '${elideBeforeLastAt(value)}'`;
  }
  const url = new URL(value);
  // Never sent (the engine reads a bearer key), and the host is named in every engine failure
  // the service and the indexer log: a password there would only leak.
  if (url.username !== '' || url.password !== '') {
    return `MEILI_HOST must not hold a user name or password: the engine's key is MEILI_API_KEY (MEILI_ADMIN_KEY for the indexer), got '${elideBeforeLastAt(value)}'`;
  }
  return undefined;
}

/** Whether `value` parses as a URL of one of `protocols` that names a host (and a valid port). */
function isUrl(value: string, protocols: readonly string[]): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return protocols.includes(url.protocol) && url.hostname !== '';
}

/**
 * A URL as it may be echoed: a password in it must never reach the terminal or a log. The value
 * is invalid, so its user information may hold the `/` or `@` that should have been
 * percent-encoded: everything before its last `@` goes (a few characters too many at worst).
 */
function elideBeforeLastAt(value: string): string {
  return value.replace(/^([^:/]*:\/\/)?.*@/s, '$1…@');
}

/**
 * HOST: an IP address, or a host name (letters, digits and hyphens in dot-separated labels, the
 * last one not all digits, so that a mistyped address like 999.1.1.1 is not taken for a name).
 * Whether a valid name resolves is only known when the server listens (see server.ts).
 */
function parseHost(value: string | undefined): string {
  if (value === undefined) return '127.0.0.1';
  const label = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  const name = new RegExp(`^(?:${label}\\.)*${label}\\.?$`);
  if (isIP(value) !== 0 || (value.length <= 253 && name.test(value) && !/(?:^|\.)[0-9]+\.?$/.test(value))) {
    return value;
  }
  throw new ConfigError(
    `HOST must be an IP address (e.g. 127.0.0.1, 0.0.0.0, ::) or a host name, got '${value}'`,
  );
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = optional(env, name);
  if (value === undefined) return fallback;
  const lower = value.toLowerCase();
  const found = allowed.find((a) => a === lower);
  if (found === undefined) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  }
  return found;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = optional(env, name);
  if (value === undefined) return fallback;
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${value}'`);
  }
  return n;
}

function parseUsers(env: Env): Map<string, string> {
  const users = new Map<string, string>();
  const inline = optional(env, 'AUTH_USERS');
  if (inline !== undefined) {
    for (const [i, pair] of inline.split(',').entries()) {
      if (pair.trim() === '') continue;
      addUser(users, pair.trim(), `AUTH_USERS entry ${i + 1}`);
    }
  }
  const file = optional(env, 'AUTH_USERS_FILE');
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(`AUTH_USERS_FILE must name a readable file of name:password lines (${code})`);
    }
    for (const [i, raw] of text.split(/\r?\n/).entries()) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      addUser(users, line, `AUTH_USERS_FILE line ${i + 1}`);
    }
  }
  return users;
}

function addUser(users: Map<string, string>, pair: string, where: string): void {
  const colon = pair.indexOf(':');
  // Never echo the pair: it holds a password.
  if (colon <= 0 || colon === pair.length - 1) {
    throw new ConfigError(`${where.split(' ')[0]} must hold name:password pairs (${where} is not one)`);
  }
  const name = pair.slice(0, colon);
  // Two passwords for one name would leave one of them silently dead.
  if (users.has(name)) {
    throw new ConfigError(`${where} names a user defined before; each user has exactly one password`);
  }
  users.set(name, pair.slice(colon + 1));
}

/** Named ranges proxy-addr (Fastify's trustProxy) knows, besides addresses and CIDRs. */
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function parseTrustProxy(value: string | undefined): boolean | number | string[] {
  if (value === undefined) return false;
  const lower = value.toLowerCase();
  if (lower === 'false' || lower === '0') return false;
  if (lower === 'true') return true;
  if (/^[0-9]+$/.test(value)) return Number(value);
  const items = value.split(',').map((s) => s.trim());
  const bad = items.find((item) => !isProxyRange(item));
  if (bad !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, a hop count, or comma-separated addresses, CIDRs or loopback/linklocal/uniquelocal, got '${bad}'`,
    );
  }
  return items.map((item) => (PROXY_RANGES.has(item.toLowerCase()) ? item.toLowerCase() : item));
}

/** An address, an address/prefix-length, an IPv4 address/netmask, or a named range. */
function isProxyRange(item: string): boolean {
  if (PROXY_RANGES.has(item.toLowerCase())) return true;
  const [address = '', bits, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  if (/^[0-9]{1,3}$/.test(bits)) return Number(bits) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(bits) === 4;
}
