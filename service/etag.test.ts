import { describe, expect, it } from 'vitest';
import { AnswerCache, etagFor, ifNoneMatchHits } from './etag.ts';

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

describe('AnswerCache', () => {
  it('returns what was stored under a tag', () => {
    const cache = new AnswerCache({ maxEntries: 10, maxChars: 1_000 });
    cache.set('a', '{"a":1}');
    expect(cache.get('a')).toBe('{"a":1}');
    expect(cache.get('b')).toBeUndefined();
  });

  it('evicts the least recently used entry beyond maxEntries', () => {
    const cache = new AnswerCache({ maxEntries: 2, maxChars: 1_000 });
    cache.set('a', 'A');
    cache.set('b', 'B');
    expect(cache.get('a')).toBe('A');
    cache.set('c', 'C');
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('A');
    expect(cache.get('c')).toBe('C');
    expect(cache.size).toBe(2);
  });

  it('keeps the stored characters within maxChars and skips answers too large to share the space', () => {
    const cache = new AnswerCache({ maxEntries: 100, maxChars: 160 });
    for (const key of ['a', 'b', 'c', 'd', 'e']) cache.set(key, key.repeat(10));
    expect(cache.size).toBe(5);
    cache.set('huge', 'x'.repeat(11));
    expect(cache.get('huge')).toBeUndefined();
    for (let i = 0; i < 20; i++) cache.set(`k${i}`, 'y'.repeat(10));
    expect(cache.size).toBe(16);
    expect(cache.get('a')).toBeUndefined();
    cache.set('k19', 'z');
    expect(cache.get('k19')).toBe('z');
    expect(cache.size).toBe(16);
  });
});
