/**
 * Authentication of the quote paths (docs/api.md#authentication): HTTP Basic against the users of
 * the configuration, and the `X-Bypass-Auth: true` escape hatch that `AUTH_BYPASS` allows or
 * denies. Runs as an `onRequest` hook, so rate limiting (registered before it) counts password
 * guessing, and parameters are only looked at once the caller is known.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import { ApiError } from './errors.ts';

/** Sent with every 401 so that clients know which credentials to offer. */
export const WWW_AUTHENTICATE = 'Basic realm="quotes", charset="UTF-8"';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const sha256 = (text: string) => hash('sha256', text, 'buffer');

/**
 * Authorization values recently found valid, so that a client sending the same header on every
 * request costs one Map lookup instead of a digest. A hit tells nothing that the 200 it leads to
 * does not already tell; a miss (anything else, wrong passwords included) still goes through the
 * constant-time comparison. Small and bounded: a client cycling through valid credentials only
 * falls back to the slow path.
 */
const VALID_HEADERS_KEPT = 256;
/** Longer values are never kept (a Basic header of a reasonable name and password is far shorter). */
const LONGEST_KEPT_HEADER = 512;

const unauthorized = (details: string) =>
  new ApiError(401, details, { headers: { 'www-authenticate': WWW_AUTHENTICATE } });
const invalidCredentials = (details: string) =>
  new ApiError(401, details, {
    error: 'invalid_credentials',
    headers: { 'www-authenticate': WWW_AUTHENTICATE },
  });

/**
 * Builds the check for one configuration: it returns the 401/403 to answer, or undefined when
 * the request may proceed. Passwords are compared as SHA-256 digests with `timingSafeEqual`; an
 * unknown user is compared against a random digest, so the time taken tells nothing about which
 * names exist. Header values that were valid are remembered (see {@link VALID_HEADERS_KEPT}).
 */
export function createAuthenticator(auth: Config['auth']): (request: FastifyRequest) => ApiError | undefined {
  const digests = new Map<string, Buffer>();
  for (const [name, password] of auth.users) digests.set(name, sha256(password));
  const decoy = randomBytes(32);
  const bypassAllowed = auth.bypass === 'allow';
  const valid = new Set<string>();

  /** Undefined when the credentials are valid, else the 401 to answer; remembers valid values. */
  function check(header: string | undefined): ApiError | undefined {
    if (header !== undefined && valid.has(header)) return undefined;
    const failure = verify(header);
    if (failure === undefined && header !== undefined && header.length <= LONGEST_KEPT_HEADER) {
      // Forgets the value kept first: a Set iterates in insertion order.
      if (valid.size >= VALID_HEADERS_KEPT) valid.delete(valid.values().next().value as string);
      valid.add(header);
    }
    return failure;
  }

  /** Undefined when the credentials are valid, else the 401 to answer. */
  function verify(header: string | undefined): ApiError | undefined {
    if (header === undefined || header === '') {
      return unauthorized('Authentication required: send Authorization: Basic base64(name:password)');
    }
    const space = header.indexOf(' ');
    const scheme = space === -1 ? header : header.slice(0, space);
    if (scheme.toLowerCase() !== 'basic') {
      // Not even the scheme is quoted: without one, the first word is the credentials themselves.
      return unauthorized(
        'Authorization must use the Basic scheme: send Authorization: Basic base64(name:password)',
      );
    }
    const encoded = space === -1 ? '' : header.slice(space + 1).trim();
    if (!isBase64(encoded)) return invalidCredentials('The Basic credentials are not valid base64');
    let decoded: string;
    try {
      decoded = utf8.decode(Buffer.from(encoded, 'base64'));
    } catch {
      return invalidCredentials('The Basic credentials are not valid UTF-8 text');
    }
    const colon = decoded.indexOf(':');
    if (colon === -1) return invalidCredentials('The Basic credentials must be base64 of name:password');
    const known = digests.get(decoded.slice(0, colon));
    const same = timingSafeEqual(sha256(decoded.slice(colon + 1)), known ?? decoy);
    return same && known !== undefined ? undefined : unauthorized('Unknown user or wrong password');
  }

  /** The error to answer, or undefined when the request may proceed. */
  return function authenticate(request: FastifyRequest): ApiError | undefined {
    const bypass = request.headers['x-bypass-auth'];
    const wantsBypass = typeof bypass === 'string' && bypass.toLowerCase() === 'true';
    if (wantsBypass && bypassAllowed) return undefined;
    const failure = check(request.headers.authorization);
    if (failure === undefined || !wantsBypass) return failure;
    return new ApiError(
      403,
      'X-Bypass-Auth is disabled on this server (AUTH_BYPASS=deny); send valid Basic credentials instead',
    );
  };
}

/** Standard base64 with optional padding; unpadded input must still be a whole number of bytes. */
function isBase64(text: string): boolean {
  if (!BASE64.test(text)) return false;
  return text.endsWith('=') ? text.length % 4 === 0 : text.length % 4 !== 1;
}
