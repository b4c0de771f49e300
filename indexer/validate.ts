/**
 * Checks data records against the Quote of docs/api.md#the-quote, one record at a time,
 * and turns each valid one into a complete {@link Quote} (genre always an array, quote_length
 * computed). Cross-record rules (unique ids, one name per author_id and one author_id per name,
 * one work_id per (work, author) and back) keep only small maps: ids in a typed array, and one
 * entry per author and per work.
 *
 * Bounds, in Unicode code points (they keep one record, and one page of answers, of bounded size;
 * they are far above what real catalogues hold, so that no real title is refused, even though a
 * label longer than the longest query value can only be found by `*_like` or read in lists):
 * - author, work, category, each genre: 1 to {@link MAX_LABEL_LENGTH}; at most {@link MAX_GENRES} genres;
 * - quote: 1 to {@link MAX_QUOTE_LENGTH}; source: at most {@link MAX_URL_LENGTH};
 * - text must hold something other than white space, and be well-formed UTF-16 (no lone
 *   surrogate: JSON can spell one as `\ud800`, and no engine can store or answer it faithfully);
 * - a label must keep something once folded: one made only of white space and combining marks
 *   could never be asked for, and would sort where no engine agrees (Meilisearch does not sort
 *   an empty string at all).
 */
import { isLanguageCode, LANGUAGE_EXPECTED } from '../service/catalogue/language.ts';
import { codePointLength, fold, QUOTE_FIELDS, type Quote } from '../service/catalogue/port.ts';

/** One thing wrong with the input, as the indexer reports it. */
export interface Problem {
  /** 1-based record number. */
  record: number;
  /** 1-based line where the record starts, when known. */
  line?: number;
  /** The field at fault; absent when the record as a whole is. */
  field?: string;
  message: string;
}

export const MAX_LABEL_LENGTH = 1_000;
export const MAX_GENRES = 20;
export const MAX_QUOTE_LENGTH = 10_000;
export const MAX_URL_LENGTH = 2_000;
/** Problems kept for the report; later ones are only counted. */
export const DEFAULT_MAX_PROBLEMS = 1_000;

const KNOWN_FIELDS = new Set<string>(QUOTE_FIELDS);
/** Distinct unknown field names remembered for the warning; a file of random keys stays bounded. */
const MAX_UNKNOWN_NAMES = 50;

const DATE = /^([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?$/;
const HTTP_URL = /^https?:\/\//i;
const SPACE_OR_CONTROL = /[\s\p{Cc}]/u;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

interface AuthorEntry {
  id: number;
  name: string;
  record: number;
}

interface WorkEntry {
  id: number;
  work: string;
  author: string;
  record: number;
}

/**
 * Validates a stream of records. Call {@link Validator.check} for each record in file order
 * (and {@link Validator.report} for records that could not even be parsed), then read
 * {@link Validator.problems}, {@link Validator.problemCount} and {@link Validator.warnings}.
 */
export class Validator {
  readonly #maxProblems: number;
  readonly #problems: Problem[] = [];
  #problemCount = 0;
  readonly #ids = new IdIndex();
  readonly #authorsById = new Map<number, AuthorEntry>();
  readonly #authorsByName = new Map<string, AuthorEntry>();
  readonly #worksById = new Map<number, WorkEntry>();
  readonly #worksByKey = new Map<string, WorkEntry>();
  readonly #unknownFields = new Map<string, number>();
  #recordsWithUnknownFields = 0;
  /** Sources repeat (one per work); remembering the last valid one skips most URL parsing. */
  #lastSource: string | undefined;

  constructor(options?: { maxProblems?: number }) {
    this.#maxProblems = options?.maxProblems ?? DEFAULT_MAX_PROBLEMS;
  }

  /** Problems found so far, in file order, at most `maxProblems` of them. */
  get problems(): readonly Problem[] {
    return this.#problems;
  }

  /** Every problem found so far, including those not kept. */
  get problemCount(): number {
    return this.#problemCount;
  }

  /** Records a problem found outside {@link Validator.check} (e.g. a line that is not JSON). */
  report(problem: Problem): void {
    this.#problemCount++;
    if (this.#problems.length < this.#maxProblems) this.#problems.push(problem);
  }

  /**
   * Checks one record. Returns the complete quote, or null when the record has a problem
   * (every problem of the record is reported, not just the first).
   */
  check(value: unknown, record: number, line?: number): Quote | null {
    const before = this.#problemCount;
    const fail = (field: string | undefined, message: string): undefined => {
      const problem: Problem = { record, message };
      if (line !== undefined) problem.line = line;
      if (field !== undefined) problem.field = field;
      this.report(problem);
      return undefined;
    };
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      fail(undefined, `must be a JSON object, got ${kind(value)}`);
      return null;
    }
    const raw = value as Record<string, unknown>;

    const id = positiveInt(raw, 'id', fail);
    const author = label(raw, 'author', fail);
    const authorId = positiveInt(raw, 'author_id', fail);
    const work = label(raw, 'work', fail);
    const workId = positiveInt(raw, 'work_id', fail);
    const category = label(raw, 'category', fail);
    const genre = genres(raw.genre, fail);
    const publishDate = date(raw.publish_date, fail);
    const source = this.#source(raw.source, fail);
    const quoteLength = quoteText(raw.quote, fail);
    const language = languageCode(raw.language, fail);
    this.#noteUnknownFields(raw);

    if (id !== undefined) {
      const first = this.#ids.claim(id, record);
      if (first !== 0) fail('id', `id ${id} is already used by record ${first}`);
    }
    // A work is keyed by its author's name: with that name in doubt, a work_id report would only echo it.
    const authorOk =
      authorId !== undefined && author !== undefined && this.#checkAuthor(authorId, author, record, fail);
    if (authorOk && workId !== undefined && work !== undefined) {
      this.#checkWork(workId, work, author, record, fail);
    }
    if (this.#problemCount !== before) return null;
    return {
      id: id as number,
      author: author as string,
      author_id: authorId as number,
      work: work as string,
      work_id: workId as number,
      category: category as string,
      genre: genre as string[],
      publish_date: publishDate as string,
      quote_length: quoteLength as number,
      source: source as string,
      quote: raw.quote as string,
      ...(language === undefined ? {} : { language }),
    };
  }

  /** Notes for the end of a run (ignored fields), each one line. */
  warnings(): string[] {
    if (this.#recordsWithUnknownFields === 0) return [];
    const names = [...this.#unknownFields].map(([name, n]) => `${name} (${n})`).join(', ');
    const records = this.#recordsWithUnknownFields;
    return [`${records} record${records === 1 ? ' has' : 's have'} unknown fields, ignored: ${names}`];
  }

  /** Checks author_id ↔ author; true when consistent with the records before. */
  #checkAuthor(authorId: number, author: string, record: number, fail: Fail): boolean {
    const byId = this.#authorsById.get(authorId);
    if (byId !== undefined) {
      // Both maps are filled together, so an id that maps to this name is consistent both ways.
      if (byId.name === author) return true;
      fail(
        'author',
        `author_id ${authorId} already belongs to ${show(byId.name)} (record ${byId.record}), not ${show(author)}`,
      );
      return false;
    }
    const byName = this.#authorsByName.get(author);
    if (byName !== undefined) {
      fail(
        'author_id',
        `author ${show(author)} already has author_id ${byName.id} (record ${byName.record}), not ${authorId}`,
      );
      return false;
    }
    const entry = { id: authorId, name: author, record };
    this.#authorsById.set(authorId, entry);
    this.#authorsByName.set(author, entry);
    return true;
  }

  #checkWork(workId: number, work: string, author: string, record: number, fail: Fail): void {
    const byId = this.#worksById.get(workId);
    if (byId !== undefined) {
      if (byId.work !== work || byId.author !== author) {
        fail(
          'work_id',
          `work_id ${workId} already belongs to ${show(byId.work)} by ${show(byId.author)} ` +
            `(record ${byId.record}), not ${show(work)} by ${show(author)}`,
        );
      }
      return;
    }
    const key = `${author}\u0000${work}`;
    const byKey = this.#worksByKey.get(key);
    if (byKey !== undefined) {
      fail(
        'work_id',
        `${show(work)} by ${show(author)} already has work_id ${byKey.id} (record ${byKey.record}), not ${workId}`,
      );
      return;
    }
    const entry = { id: workId, work, author, record };
    this.#worksById.set(workId, entry);
    this.#worksByKey.set(key, entry);
  }

  #source(value: unknown, fail: Fail): string | undefined {
    if (typeof value === 'string' && value === this.#lastSource) return value;
    if (value === undefined) return fail('source', 'is missing');
    if (typeof value !== 'string') return fail('source', `must be a URL string, got ${kind(value)}`);
    if (!value.isWellFormed()) return illFormed(value, 'source', fail);
    if (value.length > MAX_URL_LENGTH) {
      return fail('source', `must be at most ${MAX_URL_LENGTH} characters, got ${value.length}`);
    }
    const notUrl = () => fail('source', `must be an absolute http or https URL, got ${show(value)}`);
    if (!HTTP_URL.test(value)) return notUrl();
    if (SPACE_OR_CONTROL.test(value)) {
      return fail('source', `must not contain white space or control characters, got ${show(value)}`);
    }
    if (!URL.canParse(value)) return notUrl();
    this.#lastSource = value;
    return value;
  }

  #noteUnknownFields(raw: Record<string, unknown>): void {
    let unknown = false;
    for (const key in raw) {
      if (KNOWN_FIELDS.has(key)) continue;
      unknown = true;
      const n = this.#unknownFields.get(key);
      if (n !== undefined) this.#unknownFields.set(key, n + 1);
      else if (this.#unknownFields.size < MAX_UNKNOWN_NAMES) this.#unknownFields.set(key, 1);
    }
    if (unknown) this.#recordsWithUnknownFields++;
  }
}

/** A problem as the indexer prints it: `record N (line L): field: message`. */
export function formatProblem(p: Problem): string {
  const where = p.line === undefined ? `record ${p.record}` : `record ${p.record} (line ${p.line})`;
  return p.field === undefined ? `${where}: ${p.message}` : `${where}: ${p.field}: ${p.message}`;
}

type Fail = (field: string | undefined, message: string) => undefined;

function positiveInt(raw: Record<string, unknown>, field: string, fail: Fail): number | undefined {
  const value = raw[field];
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  if (value === undefined) return fail(field, 'is missing');
  if (typeof value === 'number' && Number.isInteger(value) && value > Number.MAX_SAFE_INTEGER) {
    // Past 2^53 − 1 JSON numbers lose their last digits in every JavaScript reader.
    return fail(field, `must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}, got ${kind(value)}`);
  }
  return fail(field, `must be an integer ≥ 1, got ${kind(value)}`);
}

function label(raw: Record<string, unknown>, field: string, fail: Fail): string | undefined {
  return labelText(raw[field], field, fail);
}

function labelText(value: unknown, field: string, fail: Fail): string | undefined {
  const label = text(value, field, MAX_LABEL_LENGTH, fail);
  if (label === undefined) return undefined;
  if (fold(label) === '') {
    // Printed as code points: the characters themselves would be invisible or join the quotes.
    return fail(field, `must hold more than white space and combining marks, got ${codePoints(label)}`);
  }
  return label;
}

function text(value: unknown, field: string, max: number, fail: Fail): string | undefined {
  if (typeof value !== 'string') {
    return fail(field, value === undefined ? 'is missing' : `must be a string, got ${kind(value)}`);
  }
  if (value.trim() === '') return fail(field, 'must not be empty or only white space');
  if (!value.isWellFormed()) return illFormed(value, field, fail);
  // UTF-16 length bounds the code point count from above: count only when it might matter.
  if (value.length > max && codePointLength(value) > max) {
    return fail(field, `must be at most ${max} characters, got ${codePointLength(value)}`);
  }
  return value;
}

function genres(value: unknown, fail: Fail): string[] | undefined {
  if (typeof value === 'string') {
    const one = labelText(value, 'genre', fail);
    return one === undefined ? undefined : [one];
  }
  if (!Array.isArray(value)) {
    return fail(
      'genre',
      value === undefined ? 'is missing' : `must be a string or an array of strings, got ${kind(value)}`,
    );
  }
  if (value.length === 0) return fail('genre', 'must hold at least one genre');
  if (value.length > MAX_GENRES) {
    return fail('genre', `must hold at most ${MAX_GENRES} genres, got ${value.length}`);
  }
  let ok = true;
  for (let i = 0; i < value.length; i++) {
    if (labelText(value[i], `genre[${i}]`, fail) === undefined) ok = false;
  }
  return ok ? (value as string[]) : undefined;
}

function date(value: unknown, fail: Fail): string | undefined {
  if (typeof value !== 'string') {
    return fail('publish_date', value === undefined ? 'is missing' : `must be a string, got ${kind(value)}`);
  }
  const m = DATE.exec(value);
  if (m === null) return fail('publish_date', `must be YYYY, YYYY-MM or YYYY-MM-DD, got ${show(value)}`);
  const year = Number(m[1]);
  if (m[2] !== undefined) {
    const month = Number(m[2]);
    if (month < 1 || month > 12) return fail('publish_date', `has no month ${m[2]}: ${show(value)}`);
    if (m[3] !== undefined) {
      const day = Number(m[3]);
      const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
      const last = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
      if (day < 1 || day > last) return fail('publish_date', `is not a calendar date: ${show(value)}`);
    }
  }
  return value;
}

/**
 * `language`: an ISO 639-1 code as the catalogue stores it, in lower case. Optional: a record
 * holding only the contract's fields is a valid record, and its quote has no language.
 */
function languageCode(value: unknown, fail: Fail): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return fail('language', `must be a string, got ${kind(value)}`);
  if (isLanguageCode(value)) return value;
  const hint = isLanguageCode(value.toLowerCase()) ? ` (write it in lower case: ${value.toLowerCase()})` : '';
  return fail('language', `must be ${LANGUAGE_EXPECTED}${hint}, got ${show(value)}`);
}

/** The quote's text checked as any text; its length in code points, which the record carries. */
function quoteText(value: unknown, fail: Fail): number | undefined {
  const quote = text(value, 'quote', MAX_QUOTE_LENGTH, fail);
  return quote === undefined ? undefined : codePointLength(quote);
}

/** The problem of a string holding a lone surrogate, at its first one. */
function illFormed(value: string, field: string, fail: Fail): undefined {
  const at = [...value].findIndex((c) => c.length === 1 && c >= '\ud800' && c <= '\udfff');
  return fail(field, `must be well-formed Unicode: code point ${at + 1} is a lone surrogate`);
}

/** A value as a problem message shows it: JSON, cut short. */
function show(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/** `U+0020 U+0301`: the code points of a short text, for texts that print as nothing. */
function codePoints(text: string): string {
  const all = [...text].map(
    (c) => `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`,
  );
  return all.length > 12 ? `${all.slice(0, 12).join(' ')} …` : all.join(' ');
}

/** What a wrong value is, for "must be X, got Y". */
function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${show(value)}`;
  return show(value);
}

/**
 * Remembers which record first used each id. Ids of a catalogue are usually dense (1..n), so
 * they live in a typed array of record numbers (4 bytes per id up to the largest id seen);
 * ids beyond {@link DENSE_LIMIT} fall back to a Map.
 */
class IdIndex {
  static readonly DENSE_LIMIT = 1 << 23;
  #dense = new Int32Array(1024);
  readonly #sparse = new Map<number, number>();

  /** Records `record` as the first user of `id`; returns the earlier record, or 0 when new. */
  claim(id: number, record: number): number {
    if (id >= IdIndex.DENSE_LIMIT) {
      const first = this.#sparse.get(id);
      if (first !== undefined) return first;
      this.#sparse.set(id, record);
      return 0;
    }
    if (id >= this.#dense.length) {
      let size = this.#dense.length * 2;
      while (size <= id) size *= 2;
      const grown = new Int32Array(Math.min(size, IdIndex.DENSE_LIMIT));
      grown.set(this.#dense);
      this.#dense = grown;
    }
    const first = this.#dense[id] as number;
    if (first !== 0) return first;
    this.#dense[id] = record;
    return 0;
  }
}
