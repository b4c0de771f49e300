import { describe, expect, it } from 'vitest';
import { AnswerCache, bodyBytes, etagFor, ifNoneMatchHits, RecentKeys } from './etag.ts';

describe('etagFor', () => {
  it('is a weak quoted tag that changes with the version and with the request key', () => {
    const tag = etagFor('v1', 'key');
    expect(tag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(etagFor('v1', 'key')).toBe(tag);
    expect(etagFor('v2', 'key')).not.toBe(tag);
    expect(etagFor('v1', 'other')).not.toBe(tag);
    // The separator keeps (version, key) pairs apart.
    expect(etagFor('v1k', 'ey')).not.toBe(tag);
  });
});

describe('ifNoneMatchHits', () => {
  const tag = etagFor('v', 'k');
  const strong = tag.slice(2);

  it('matches the tag itself, its strong form, and a list holding it', () => {
    expect(ifNoneMatchHits(tag, tag, false)).toBe(true);
    expect(ifNoneMatchHits(strong, tag, false)).toBe(true);
    expect(ifNoneMatchHits(`"a", W/"b" ,${tag}`, tag, false)).toBe(true);
  });

  it('does not match other tags, an absent or empty header', () => {
    expect(ifNoneMatchHits('W/"other"', tag, true)).toBe(false);
    expect(ifNoneMatchHits(undefined, tag, true)).toBe(false);
    expect(ifNoneMatchHits('', tag, true)).toBe(false);
    expect(ifNoneMatchHits(tag.replace('W/', 'w/'), tag, true)).toBe(false);
  });

  it('matches * only when the resource exists', () => {
    expect(ifNoneMatchHits('*', tag, false)).toBe(false);
    expect(ifNoneMatchHits('*', tag, true)).toBe(true);
    expect(ifNoneMatchHits('"x", *', tag, true)).toBe(true);
  });
});

describe('bodyBytes', () => {
  it('encodes the text as UTF-8, in a buffer of exactly its own bytes', () => {
    const text = '{"quote":"Ça va — “très” bien 🙂"}';
    const body = bodyBytes(text);
    expect(body.toString('utf8')).toBe(text);
    expect(body.length).toBe(Buffer.byteLength(text));
    // Not a slice of Node's shared pool, which the cache would keep alive whole.
    expect(body.buffer.byteLength).toBe(body.length);
  });
});

describe('AnswerCache', () => {
  /** An answer whose entry holds its UTF-8 bytes plus 2: a one-letter key and its tag "t". */
  const answer = (text: string) => ({ etag: 't', body: Buffer.from(text, 'utf8') });
  const text = (cached: { body: Buffer } | undefined) => cached?.body.toString('utf8');

  it('returns the answer stored for a version and a request key, and nothing for another', () => {
    const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1_000 });
    cache.set('v1', 'key', { etag: etagFor('v1', 'key'), body: Buffer.from('{"a":1}') });
    expect(cache.get('v1', 'key')?.etag).toBe(etagFor('v1', 'key'));
    expect(text(cache.get('v1', 'key'))).toBe('{"a":1}');
    expect(cache.get('v2', 'key')).toBeUndefined();
    expect(cache.get('v1', 'other')).toBeUndefined();
  });

  it('replaces the answer of an older version, and never serves one version for another', () => {
    const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1_000 });
    cache.set('v1', 'key', answer('old'));
    cache.set('v2', 'key', answer('new'));
    expect(cache.get('v1', 'key')).toBeUndefined();
    expect(text(cache.get('v2', 'key'))).toBe('new');
    expect(cache.size).toBe(1);
  });

  it('evicts the least recently used entry beyond maxEntries', () => {
    const cache = new AnswerCache({ maxEntries: 2, maxBytes: 1_000 });
    cache.set('v', 'a', answer('A'));
    cache.set('v', 'b', answer('B'));
    expect(text(cache.get('v', 'a'))).toBe('A');
    cache.set('v', 'c', answer('C'));
    expect(cache.get('v', 'b')).toBeUndefined();
    expect(text(cache.get('v', 'a'))).toBe('A');
    expect(text(cache.get('v', 'c'))).toBe('C');
    expect(cache.size).toBe(2);
  });

  it('spares an entry used since it was stored, and keeps sparing it while it is used', () => {
    const cache = new AnswerCache({ maxEntries: 3, maxBytes: 1_000 });
    for (const key of ['a', 'b', 'c']) cache.set('v', key, answer(key));
    for (const key of ['d', 'e', 'f', 'g']) {
      expect(text(cache.get('v', 'a'))).toBe('a');
      cache.set('v', key, answer(key));
    }
    // b, c, d and e went, oldest first; a, used before each store, stayed.
    expect(['a', 'b', 'c', 'd', 'e', 'f', 'g'].filter((key) => cache.get('v', key) !== undefined)).toEqual([
      'a',
      'f',
      'g',
    ]);
  });

  it('never evicts the entry just stored, even when every other one was used', () => {
    const cache = new AnswerCache({ maxEntries: 3, maxBytes: 1_000 });
    for (const key of ['a', 'b', 'c']) cache.set('v', key, answer(key));
    for (const key of ['a', 'b', 'c']) cache.get('v', key);
    cache.set('v', 'd', answer('d'));
    expect(text(cache.get('v', 'd'))).toBe('d');
    // All three were used once: the oldest of them goes.
    expect(cache.get('v', 'a')).toBeUndefined();
    expect(cache.size).toBe(3);
  });

  it('keeps the stored bytes within maxBytes and skips answers too large to share the space', () => {
    // Entries of 10 bytes: an 8-character body, its key and its tag.
    const cache = new AnswerCache({ maxEntries: 100, maxBytes: 160 });
    for (const key of ['a', 'b', 'c', 'd', 'e']) cache.set('v', key, answer(key.repeat(8)));
    expect(cache.size).toBe(5);
    cache.set('v', 'h', answer('x'.repeat(9)));
    expect(cache.get('v', 'h')).toBeUndefined();
    for (let i = 0; i < 20; i++) cache.set('v', String.fromCharCode(0x41 + i), answer('y'.repeat(8)));
    expect(cache.size).toBe(16);
    expect(cache.get('v', 'a')).toBeUndefined();
    cache.set('v', 'T', answer('z'));
    expect(text(cache.get('v', 'T'))).toBe('z');
    expect(cache.size).toBe(16);
  });

  it('measures bodies in encoded bytes, not characters', () => {
    const cache = new AnswerCache({ maxEntries: 100, maxBytes: 160 });
    // Five characters, but ten bytes in UTF-8: with its key and tag, more than a 10-byte share.
    cache.set('v', 'a', answer('é'.repeat(5)));
    expect(cache.get('v', 'a')).toBeUndefined();
    cache.set('v', 'b', answer('é'.repeat(4)));
    expect(text(cache.get('v', 'b'))).toBe('éééé');
  });
});

describe('AnswerCache.askedAgain', () => {
  const answer = (body: string) => ({ etag: etagFor('v', body), body: Buffer.from(body) });
  /** What the routes do with an answer they produced. */
  const offer = (cache: AnswerCache, key: string, body: string) => {
    if (cache.askedAgain(key)) cache.set('v', key, answer(body));
  };

  it('says no the first time a key is asked, and yes when it comes back', () => {
    const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1_000 });
    expect(cache.askedAgain('/quotes?page=2')).toBe(false);
    expect(cache.askedAgain('/quotes?page=3')).toBe(false);
    expect(cache.askedAgain('/quotes?page=2')).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('leaves the stored answers in place under a stream of distinct keys', () => {
    const cache = new AnswerCache({ maxEntries: 4, maxBytes: 1_000 });
    for (const key of ['a', 'a', 'b', 'b']) offer(cache, key, key);
    for (let i = 0; i < 1_000; i++) offer(cache, `/quotes?author_id=${i}`, String(i));
    expect(cache.size).toBe(2);
    expect(cache.get('v', 'a')?.body.toString()).toBe('a');
    expect(cache.get('v', 'b')?.body.toString()).toBe('b');
  });
});

describe('RecentKeys', () => {
  it('answers false for a new key and true when it comes back', () => {
    const recent = new RecentKeys(1024);
    expect(recent.seenBefore('/quotes?limit=5')).toBe(false);
    expect(recent.seenBefore('/quotes?limit=10')).toBe(false);
    expect(recent.seenBefore('/quotes?limit=5')).toBe(true);
    expect(recent.seenBefore('/quotes?limit=10')).toBe(true);
    expect(recent.seenBefore('')).toBe(false);
    expect(recent.seenBefore('')).toBe(true);
  });

  it('remembers about as many keys as it has slots, forgetting older ones when full', () => {
    const recent = new RecentKeys(1024);
    const keys = Array.from({ length: 20_000 }, (_, i) => `/quotes?author_id=${i}&sort=work`);
    for (const key of keys.slice(0, 200)) recent.seenBefore(key);
    // 200 keys in 1024 slots: about one in ten lands on a slot another took after it.
    expect(keys.slice(0, 200).filter((key) => recent.seenBefore(key)).length).toBeGreaterThan(150);
    for (const key of keys.slice(200)) recent.seenBefore(key);
    // 20,000 later keys took every slot over: the first ones are forgotten, none is mistaken.
    expect(keys.slice(0, 200).filter((key) => recent.seenBefore(key)).length).toBeLessThan(10);
  });

  it('takes a power of two from 2 to 2^30 slots', () => {
    expect(() => new RecentKeys(1000)).toThrow(RangeError);
    expect(() => new RecentKeys(1)).toThrow(RangeError);
    expect(() => new RecentKeys(2 ** 31)).toThrow(RangeError);
    expect(new RecentKeys(2).seenBefore('x')).toBe(false);
  });
});
