/**
 * Pages and quotes passed through as the engine wrote them. `POST /documents/fetch` answers
 * `{"results":[...],"offset":…,"limit":…,"total":…}`, each document holding the requested fields
 * in the order of the index's field ids, which the indexer's documents make the Quote's own
 * order: the engine already wrote the `results` array byte for byte as the list route's
 * serialiser would write the page. Parsing it into objects and serialising them again cost the
 * service more CPU than the rest of a listing.
 *
 * Nothing is assumed: the answer is read against the exact shape of the page it must be, every
 * document holding exactly the requested fields in QUOTE_FIELDS order, integers as JSON.stringify
 * writes a safe integer, strings with only the escapes it writes, genre a list of strings. An
 * answer of any other shape (an index built by another release, another engine version's
 * spelling) is not passed through, and the caller reads it the plain way.
 *
 * The bytes are read as latin1, one character per byte: every character the shape is made of is
 * ASCII, and no byte of a multi-byte UTF-8 sequence is.
 */
import { QUOTE_FIELDS, type QuoteField } from '../port.ts';

/** A page's JSON array as the engine sent it, with its number of quotes and the exact total. */
export interface RawPage {
  /** The bytes of the `results` array, `[` to `]`: a view of the answer ({@link rawPage}). */
  items: Buffer;
  count: number;
  total: number;
}

type Kind = 'integer' | 'string' | 'strings';

const KINDS: Record<QuoteField, Kind> = {
  id: 'integer',
  author: 'string',
  author_id: 'integer',
  work: 'string',
  work_id: 'integer',
  category: 'string',
  genre: 'strings',
  publish_date: 'string',
  quote_length: 'integer',
  source: 'string',
  quote: 'string',
  language: 'string',
};

/** What a document of one projection looks like: its keys as written, in order, and their kinds. */
interface Shape {
  /** `{"id":`, then `,"author":`…: each key with what precedes it. */
  keys: string[];
  kinds: Kind[];
  /** What follows the last value: `}`, or the catalogue version's field and then `}`. */
  end: string;
}

const shapes = new Map<string, Shape>();

/** The shape of documents holding `fields` (any order, as the engine orders them by its field ids). */
function shapeOf(fields: readonly QuoteField[]): Shape {
  const name = fields.join(',');
  let shape = shapes.get(name);
  if (shape === undefined) {
    const wanted = new Set(fields);
    const ordered = QUOTE_FIELDS.filter((field) => wanted.has(field));
    shape = {
      keys: ordered.map((field, i) => `${i === 0 ? '{' : ','}"${field}":`),
      kinds: ordered.map((field) => KINDS[field]),
      end: '}',
    };
    // Projections are subsets of twelve fields, written in one order: few distinct names.
    if (shapes.size < 4096) shapes.set(name, shape);
  }
  return shape;
}

const RESULTS = '{"results":[';
const TAIL = /^,"offset":\d{1,15},"limit":\d{1,15},"total":(0|[1-9]\d{0,14})\}$/;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACKET = 0x5b;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * The page of a `POST /documents/fetch` answer whose documents hold `fields`, as bytes ready to
 * send; undefined when the answer is not exactly what the route's serialiser would write.
 */
export function rawPage(body: Buffer, fields: readonly QuoteField[]): RawPage | undefined {
  const page = readResults(body.toString('latin1'), shapeOf(fields));
  if (page === undefined) return undefined;
  const { spans, close, total } = page;
  return { items: body.subarray(RESULTS.length - 1, close + 1), count: spans.length / 2, total };
}

/**
 * The page of a `POST /documents/fetch` answer whose documents hold `fields` and then
 * `catalogue_version` (the indexer writes it after the quote's own fields, so the engine does
 * too), every one of them of `version`: the page without the version, as bytes of a buffer of
 * its own; undefined when the answer is of any other shape or holds another version.
 */
export function rawVersionedPage(
  body: Buffer,
  fields: readonly QuoteField[],
  version: string,
): RawPage | undefined {
  // The version as the engine writes a string: only the escapes JSON.stringify writes.
  const end = `,"catalogue_version":${JSON.stringify(version)}}`;
  const page = readResults(body.toString('latin1'), { ...shapeOf(fields), end });
  if (page === undefined) return undefined;
  const { spans, total } = page;
  const count = spans.length / 2;
  // Each document without its version: its bytes up to the version, then its closing brace.
  const cut = end.length - 1;
  let length = 2 + Math.max(0, count - 1);
  for (let i = 0; i < spans.length; i += 2) length += (spans[i + 1] as number) - (spans[i] as number) - cut;
  const items = Buffer.allocUnsafeSlow(length);
  let out = 0;
  items[out++] = OPEN_BRACKET;
  for (let i = 0; i < spans.length; i += 2) {
    if (i > 0) items[out++] = COMMA;
    out += body.copy(items, out, spans[i] as number, (spans[i + 1] as number) - end.length);
    items[out++] = CLOSE_BRACE;
  }
  items[out] = CLOSE_BRACKET;
  return { items, count, total };
}

/**
 * The `results` array of an answer whose documents are all of `shape`: each document's
 * `[start, end)` in `spans`, the index of the array's `]` and the answer's exact total;
 * undefined for an answer of any other shape.
 */
function readResults(
  text: string,
  shape: Shape,
): { spans: number[]; close: number; total: number } | undefined {
  if (!text.startsWith(RESULTS)) return undefined;
  const scan = scanOf(text);
  const spans: number[] = [];
  let at = RESULTS.length;
  if (text.charCodeAt(at) !== CLOSE_BRACKET) {
    for (;;) {
      const start = at;
      at = skipDocument(scan, at, shape);
      if (at < 0) return undefined;
      spans.push(start, at);
      const next = text.charCodeAt(at);
      if (next === CLOSE_BRACKET) break;
      if (next !== COMMA) return undefined;
      at++;
    }
  }
  const tail = TAIL.exec(text.slice(at + 1));
  if (tail === null) return undefined;
  return { spans, close: at, total: Number(tail[1]) };
}

/**
 * Whether a `GET /documents/{id}` answer is one document holding `fields` exactly as the route's
 * serialiser writes the quote.
 */
export function isRawDocument(body: Buffer, fields: readonly QuoteField[]): boolean {
  const text = body.toString('latin1');
  return skipDocument(scanOf(text), 0, shapeOf(fields)) === text.length;
}

/**
 * An answer being read, and where its next backslash is. Texts of the catalogue seldom hold one:
 * looking for it afresh from each string would read on to the end of the answer every time (a
 * page of 100 quotes then took longer to check than the rest of its request), so each backslash
 * is looked for once, from where the reading has got to.
 */
interface Scan {
  readonly text: string;
  /** The first backslash at or after the last place asked about; -1 when none follows it. */
  backslash: number;
}

function scanOf(text: string): Scan {
  return { text, backslash: text.indexOf('\\') };
}

/** The first backslash at or after `from`, or -1; `from` never goes back within one answer. */
function backslashFrom(scan: Scan, from: number): number {
  if (scan.backslash !== -1 && scan.backslash < from) scan.backslash = scan.text.indexOf('\\', from);
  return scan.backslash;
}

/** The index just past the document of `shape` at `at`, or -1 when it is not one. */
function skipDocument(scan: Scan, at: number, { keys, kinds, end }: Shape): number {
  const text = scan.text;
  let next = at;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (!text.startsWith(key, next)) return -1;
    next = skipValue(scan, next + key.length, kinds[i] as Kind);
    if (next < 0) return -1;
  }
  return text.startsWith(end, next) ? next + end.length : -1;
}

/** The index just past the value of `kind` at `at`, or -1 when it is not one as JSON.stringify writes it. */
function skipValue(scan: Scan, at: number, kind: Kind): number {
  const text = scan.text;
  if (kind === 'string') return skipString(scan, at);
  if (kind === 'integer') return skipInteger(text, at);
  if (text.charCodeAt(at) !== OPEN_BRACKET) return -1;
  let next = at + 1;
  if (text.charCodeAt(next) === CLOSE_BRACKET) return next + 1;
  for (;;) {
    next = skipString(scan, next);
    if (next < 0) return -1;
    const c = text.charCodeAt(next);
    if (c === CLOSE_BRACKET) return next + 1;
    if (c !== COMMA) return -1;
    next++;
  }
}

/** A non-negative safe integer as `String(n)` writes it: no sign, leading zero, fraction or exponent. */
function skipInteger(text: string, at: number): number {
  // Ids and lengths are positive: a sign is no answer of this catalogue's.
  const first = at;
  let next = at;
  while (next < text.length) {
    const c = text.charCodeAt(next);
    if (c < ZERO || c > NINE) break;
    next++;
  }
  const digits = next - first;
  if (digits === 0 || digits > 15 || (digits > 1 && text.charCodeAt(first) === ZERO)) return -1;
  return next;
}

/**
 * A string whose escapes are exactly JSON.stringify's: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`,
 * and `\u00xx` (lower-case hex) for the other control characters. Contents are not scanned
 * otherwise: the engine writes every control character escaped (a raw one is not JSON at all).
 */
function skipString(scan: Scan, at: number): number {
  const text = scan.text;
  if (text.charCodeAt(at) !== QUOTE) return -1;
  const start = at + 1;
  let close = text.indexOf('"', start);
  for (;;) {
    if (close < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) break;
    close = text.indexOf('"', close + 1);
  }
  for (let backslash = backslashFrom(scan, start); backslash !== -1 && backslash < close; ) {
    const length = escapeLength(text, backslash);
    if (length === 0) return -1;
    backslash = backslashFrom(scan, backslash + length);
  }
  return close + 1;
}

/** Characters JSON.stringify writes with a letter after the backslash. */
const SHORT_ESCAPES = new Set(['"', '\\', 'b', 'f', 'n', 'r', 't']);
/** The control characters among them, which never take the `\u00xx` form. */
const SHORT_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
const UNICODE_ESCAPE = /^u00[01][0-9a-f]$/;

/** The length of the escape at `at` when JSON.stringify writes it so, else 0. */
function escapeLength(text: string, at: number): number {
  const letter = text[at + 1] as string;
  if (SHORT_ESCAPES.has(letter)) return 2;
  const unicode = text.slice(at + 1, at + 6);
  if (!UNICODE_ESCAPE.test(unicode)) return 0;
  return SHORT_CONTROLS.has(Number.parseInt(unicode.slice(3), 16)) ? 0 : 6;
}
