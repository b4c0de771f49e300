import { describe, expect, it } from 'vitest';
import { parseRanges, publishDay } from './ranges.ts';

/** Days since 1970-01-01 by the platform's own calendar (any year, 0 included). */
function platformDay(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime() / 86_400_000;
}

describe('publish days', () => {
  it('count days exactly as the proleptic Gregorian calendar does, for every precision', () => {
    const epoch = publishDay('1970-01-01') as number;
    for (const year of [0, 1, 4, 99, 100, 400, 1000, 1600, 1700, 1813, 1900, 2000, 2024, 9999]) {
      for (let month = 1; month <= 12; month++) {
        const mm = String(month).padStart(2, '0');
        const yyyy = String(year).padStart(4, '0');
        expect(publishDay(`${yyyy}-${mm}`)).toBe(epoch + platformDay(year, month, 1));
        for (const day of [1, 28, 29, 30, 31]) {
          const text = `${yyyy}-${mm}-${String(day).padStart(2, '0')}`;
          const valid = new Date(platformDay(year, month, day) * 86_400_000).getUTCDate() === day;
          expect(publishDay(text), text).toBe(valid ? epoch + platformDay(year, month, day) : undefined);
        }
      }
      expect(publishDay(String(year).padStart(4, '0'))).toBe(epoch + platformDay(year, 1, 1));
    }
    expect(publishDay('0000-01-01')).toBe(0);
  });

  it('refuse what is not a date', () => {
    for (const text of [
      '',
      '813',
      '18130',
      '1813-1',
      '1813-00',
      '1813-13',
      '1813-02-29',
      '1813-01-00',
      '1813/01',
    ]) {
      expect(publishDay(text), text).toBeUndefined();
    }
  });

  it('parse bounds and refuse inverted ranges naming the parameter', () => {
    expect(parseRanges({})).toBeUndefined();
    expect(parseRanges({ min_length: '0', max_length: '0' })).toEqual({ min_length: 0, max_length: 0 });
    expect(() => parseRanges({ min_length: '007' })).toThrow(/min_length .*without leading zeros/);
    expect(() => parseRanges({ min_length: '3', max_length: '2' })).toThrow(
      /^min_length \(3\).*max_length \(2\)/,
    );
    expect(() => parseRanges({ published_from: '1813-01-02', published_to: '1813' })).toThrow(
      /^published_from/,
    );
  });
});
