/**
 * Conditional requests (docs/api.md#caching). An ETag names one catalogue version and one
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
 * counts only when `exists` says the request has a 200 answer. Explicit tags match either way:
 * a caller passes `exists = true` only once it holds that answer (kept, or just produced), since
 * anyone can compute the tag of a request that matches nothing.
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

/** A response body ready to send, and the ETag it goes with. */
export interface CachedAnswer {
  readonly etag: string;
  /** The serialised body as the UTF-8 bytes that go on the wire. */
  readonly body: Buffer;
}

/**
 * The bytes of a serialised body, in memory of their own: `Buffer.from` places short texts in a
 * slice of Node's shared 8 KB pool, which a long-lived cache entry would keep alive whole.
 */
export function bodyBytes(text: string): Buffer {
  const body = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  body.write(text);
  return body;
}

/**
 * Serialised answers by canonical request key, each for one catalogue version (what
 * {@link etagFor} hashes, so a hit also spares computing the tag). Bodies are kept as bytes
 * rather than the serialiser's string because a string is re-encoded on every write (and
 * measured again for Content-Length): for a cached page that encoding was the largest single
 * cost of a request.
 *
 * One entry per key: a catalogue version never changes, so an answer stays right for as long as
 * its version is served, and the answer of a newer version simply replaces it. Keyed by the key
 * alone (the version is compared, not hashed), a hit costs a lookup whose hash the key string
 * already carries. Once either bound is reached, the oldest entry not used since it was stored
 * (or last spared) goes first: least recently used, approximately, without reordering the
 * entries on every hit. Keys count towards the bytes, as they can be long.
 */
export class AnswerCache {
  readonly #entries = new Map<string, CachedAnswer & { readonly version: string; used: boolean }>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  /** Keys asked recently ({@link askedAgain}). */
  readonly #recent: RecentKeys;

  constructor(options: { maxEntries: number; maxBytes: number }) {
    this.#maxEntries = options.maxEntries;
    this.#maxBytes = options.maxBytes;
    // Room to remember several times more keys than are stored, so that a key asked again a
    // while later still counts as asked again.
    this.#recent = new RecentKeys(
      2 ** Math.min(30, Math.max(1, Math.ceil(Math.log2(options.maxEntries * 8)))),
    );
  }

  /** The answer stored for `key` under this catalogue `version`, if any. */
  get(version: string, key: string): CachedAnswer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.version !== version) return undefined;
    // Marked, not moved: moving it to the young end on every hit (a delete and a set) was the
    // largest cost of answering `GET /quotes` from here. Eviction gives it a second chance.
    entry.used = true;
    return entry;
  }

  /**
   * Whether `key` was asked before, since its slot last held another key; remembered either
   * way. Answers are stored for requests that come back, not for every request once: a caller
   * checks this before it does what storing an answer takes.
   */
  askedAgain(key: string): boolean {
    return this.#recent.seenBefore(key);
  }

  /** Stores the answer of `key` under `version`, replacing the key's answer of any version. */
  set(version: string, key: string, answer: CachedAnswer): void {
    const size = sizeOf(key, answer);
    // One huge answer must not flush everything else.
    if (size > this.#maxBytes / 16) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) {
      this.#entries.delete(key);
      this.#bytes -= sizeOf(key, previous);
    }
    this.#entries.set(key, { version, etag: answer.etag, body: answer.body, used: false });
    this.#bytes += size;
    // From the oldest: an entry used since it was stored or last passed over moves to the young
    // end, unmarked (a second chance), and so does the one just stored; the first other entry
    // goes. Iteration also reaches the entries moved during it, now unmarked, so this ends.
    for (const [oldest, old] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      if ((old.used || oldest === key) && this.#entries.size > 0) {
        old.used = false;
        this.#entries.set(oldest, old);
      } else {
        this.#bytes -= sizeOf(oldest, old);
      }
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

/**
 * Which request keys were asked recently: one 32-bit fingerprint per slot of a fixed table, so
 * remembering costs no allocation. An answer is stored only when its key comes back (a
 * "doorkeeper" before the cache): a stream of distinct queries (a crawler, a deep listing)
 * then leaves the cache's hot entries in place, and never makes the garbage of answers stored
 * for nobody, which would outlive a few young-generation collections and so cost full ones.
 * Two keys sharing a slot and a fingerprint (odds about one in 4 billion) only store an answer
 * one request early.
 */
export class RecentKeys {
  readonly #fingerprints: Int32Array;
  readonly #shift: number;

  /** `slots`: a power of two from 2 to 2^30; about the number of distinct keys remembered at once. */
  constructor(slots: number) {
    const bits = Math.log2(slots);
    if (!Number.isInteger(bits) || bits < 1 || bits > 30) {
      throw new RangeError('slots must be a power of two from 2 to 2^30');
    }
    this.#fingerprints = new Int32Array(slots);
    this.#shift = 32 - bits;
  }

  /** True when `key` was asked since its slot last held another key; remembers it either way. */
  seenBefore(key: string): boolean {
    // FNV-1a over UTF-16 units for the fingerprint; a second multiply spreads it for the slot.
    let h = 0x811c9dc5 | 0;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    // 0 is the empty slot's value, never a fingerprint.
    const fingerprint = h === 0 ? 1 : h;
    const slot = Math.imul(h, 0x9e3779b1) >>> this.#shift;
    if (this.#fingerprints[slot] === fingerprint) return true;
    this.#fingerprints[slot] = fingerprint;
    return false;
  }
}

/** What an entry holds: its body's bytes, and its key and tag at one byte per character. */
function sizeOf(key: string, answer: CachedAnswer): number {
  return answer.body.length + key.length + answer.etag.length;
}
