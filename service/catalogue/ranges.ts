/**
 * Range filters: `min_length` / `max_length` on `quote_length`, `published_from` /
 * `published_to` on `publish_date`. Dates are compared as day numbers: a partial date (`1813`,
 * `1813-05`) stands for its first day, in the catalogue and in the request alike, so
 * `published_to=1813` keeps `1813`, `1813-01` and `1813-01-01` but not `1813-06-01`.
 *
 * A day number is the count of days since 0000-01-01 in the proleptic Gregorian calendar: a
 * non-negative integer for every four-digit year, which both engines compare exactly (the
 * Meilisearch index stores it per quote as `publish_day`).
 */
import { integerHint, QueryError } from './port.ts';

export const RANGE_NAMES = ['min_length', 'max_length', 'published_from', 'published_to'] as const;
export type RangeName = (typeof RANGE_NAMES)[number];

/** Bounds as validated numbers; an absent bound does not constrain. Dates are day numbers. */
export interface Ranges {
  min_length?: number;
  max_length?: number;
  published_from?: number;
  published_to?: number;
}

/** Largest length bound accepted: above any quote the indexer takes (10,000 code points). */
export const MAX_LENGTH_BOUND = 1_000_000;

const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;
const INTEGER = /^(0|[1-9]\d{0,6})$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const isLeap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/** Days since 0000-01-01 of a calendar date (month 1-12, day 1-31), proleptic Gregorian. */
function dayNumber(year: number, month: number, day: number): number {
  // Days of the whole years before `year`: year 0 is a leap year, hence the +1 terms.
  const y = year - 1;
  let days = year === 0 ? 0 : 366 + y * 365 + Math.floor(y / 4) - Math.floor(y / 100) + Math.floor(y / 400);
  for (let m = 1; m < month; m++) days += m === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[m - 1] as number);
  return days + day - 1;
}

/**
 * The day number of the first day of a `YYYY`, `YYYY-MM` or `YYYY-MM-DD` date, or undefined when
 * the text is not such a date (no month 13, no 30 February).
 */
export function publishDay(date: string): number | undefined {
  const m = DATE.exec(date);
  if (m === null) return undefined;
  const year = Number(m[1]);
  const month = m[2] === undefined ? 1 : Number(m[2]);
  const day = m[3] === undefined ? 1 : Number(m[3]);
  if (month < 1 || month > 12) return undefined;
  const last = month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  if (day < 1 || day > last) return undefined;
  return dayNumber(year, month, day);
}

/** What each range parameter accepts, for its 400s. */
export const RANGE_EXPECTED: Record<RangeName, string> = {
  min_length: `an integer from 0 to ${MAX_LENGTH_BOUND}`,
  max_length: `an integer from 0 to ${MAX_LENGTH_BOUND}`,
  published_from: 'a date YYYY, YYYY-MM or YYYY-MM-DD',
  published_to: 'a date YYYY, YYYY-MM or YYYY-MM-DD',
};

/** The bounds that must not be inverted: lower, upper, how the lower may not stand, and a note. */
const ORDERED_BOUNDS = [
  ['min_length', 'max_length', 'greater than', ''],
  ['published_from', 'published_to', 'after', '; partial dates stand for their first day'],
] as const;

const show = (value: string) => (value.length <= 40 ? value : `${value.slice(0, 40)}…`);

/**
 * Validates raw range values (one per parameter) into {@link Ranges}; undefined when none is
 * given. Throws {@link QueryError} naming the parameter for a bad value, and naming both for an
 * inverted range (a lower bound above the upper one can only match nothing: a mistake).
 */
export function parseRanges(raw: Partial<Record<RangeName, string>>): Ranges | undefined {
  const ranges: Ranges = {};
  let any = false;
  for (const name of RANGE_NAMES) {
    const value = raw[name];
    if (value === undefined) continue;
    any = true;
    if (name === 'min_length' || name === 'max_length') {
      if (!INTEGER.test(value) || Number(value) > MAX_LENGTH_BOUND) {
        throw new QueryError(
          name,
          `${name} must be ${RANGE_EXPECTED[name]}${integerHint(value)}, got '${show(value)}'`,
        );
      }
      ranges[name] = Number(value);
    } else {
      const day = publishDay(value);
      if (day === undefined) {
        throw new QueryError(
          name,
          `${name} must be ${RANGE_EXPECTED[name]} (a real calendar date), got '${show(value)}'`,
        );
      }
      ranges[name] = day;
    }
  }
  if (!any) return undefined;
  for (const [low, high, relation, note] of ORDERED_BOUNDS) {
    const lower = ranges[low];
    const upper = ranges[high];
    if (lower !== undefined && upper !== undefined && lower > upper) {
      throw new QueryError(low, `${low} (${raw[low]}) must not be ${relation} ${high} (${raw[high]})${note}`);
    }
  }
  return ranges;
}

/** Whether a quote's length and date lie within the ranges (the reference semantics). */
export function inRanges(
  quote: { quote_length: number; publish_date: string },
  ranges: Ranges | undefined,
): boolean {
  if (ranges === undefined) return true;
  const { min_length: min, max_length: max, published_from: from, published_to: to } = ranges;
  if (min !== undefined && quote.quote_length < min) return false;
  if (max !== undefined && quote.quote_length > max) return false;
  if (from === undefined && to === undefined) return true;
  const day = publishDay(quote.publish_date);
  if (day === undefined) return false;
  return (from === undefined || day >= from) && (to === undefined || day <= to);
}

/** Whether any bound is set. */
export function hasRanges(ranges: Ranges | undefined): ranges is Ranges {
  return ranges !== undefined && RANGE_NAMES.some((name) => ranges[name] !== undefined);
}

/** A canonical text of the bounds (equal bounds, equal text): part of cache keys and ETags. */
export function rangesKey(ranges: Ranges | undefined): string {
  if (!hasRanges(ranges)) return '';
  return RANGE_NAMES.map((name) => ranges[name] ?? '').join(':');
}
