/**
 * Conditional requests (api-contract.md section 9). An ETag names one catalogue version and one
 * canonical request, so it changes exactly when the response can change, and equivalent requests
 * (same query in another spelling) share it.
 */
import { hash } from 'node:crypto';

/** Cache-Control of every response that carries an ETag. */
export const CACHEABLE = 'private, max-age=60';
/** Cache-Control of responses that must never be reused: random quotes and errors. */
export const NO_STORE = 'no-store';

/**
 * A weak ETag for a catalogue version and a canonical request key. Weak because the promise is
 * "the same result", which still holds if a proxy re-encodes the bytes. SHA-1 is used as a fast
 * fingerprint, not for security: nothing secret goes in and collisions only cost a cache miss.
 */
export function etagFor(version: string, key: string): string {
  return `W/"${hash('sha1', `${version}\n${key}`, 'base64url')}"`;
}

/**
 * Whether an `If-None-Match` header matches `etag` with the weak comparison of RFC 9110: any
 * listed tag equal to it once `W/` is ignored. `*` matches any current representation, so it
 * counts only when `exists` says the request has a 200 answer; callers check before running a
 * query with `exists = false` (explicit tags suffice) and after it with `exists = true`.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string, exists: boolean): boolean {
  if (header === undefined || header === '') return false;
  const opaque = opaqueTag(etag);
  for (const item of header.split(',')) {
    const tag = item.trim();
    if (tag === '*') {
      if (exists) return true;
      continue;
    }
    if (opaqueTag(tag) === opaque) return true;
  }
  return false;
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/**
 * Serialised answers by ETag. An ETag names one catalogue version and one canonical request, and
 * a catalogue version never changes, so an answer stored under its ETag stays right for as long
 * as the tag is current; entries of replaced catalogues simply age out. Least recently used
 * entries go first once either bound is reached.
 */
export class AnswerCache {
  readonly #entries = new Map<string, string>();
  readonly #maxEntries: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(options: { maxEntries: number; maxChars: number }) {
    this.#maxEntries = options.maxEntries;
    this.#maxChars = options.maxChars;
  }

  get(etag: string): string | undefined {
    const body = this.#entries.get(etag);
    if (body !== undefined) {
      // Re-inserting moves the entry to the young end of the Map's insertion order.
      this.#entries.delete(etag);
      this.#entries.set(etag, body);
    }
    return body;
  }

  set(etag: string, body: string): void {
    // One huge answer must not flush everything else.
    if (body.length > this.#maxChars / 16) return;
    const previous = this.#entries.get(etag);
    if (previous !== undefined) {
      this.#entries.delete(etag);
      this.#chars -= previous.length;
    }
    this.#entries.set(etag, body);
    this.#chars += body.length;
    for (const [oldest, old] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#chars <= this.#maxChars) break;
      this.#entries.delete(oldest);
      this.#chars -= old.length;
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
