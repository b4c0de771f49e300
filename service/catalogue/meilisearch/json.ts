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

/**
 * What a document of one projection looks like: a sticky regular expression matching exactly one
 * document as the route's serialiser writes it, from its `{` to its `}`. One expression per
 * shape rather than a reader walking key by key: irregexp compiles it to machine code that reads
 * a page in about two thirds of the time the walk took, and a page's check was the largest
 * single cost of a listing in front of the engine.
 */
interface Shape {
  /** Matches one document at its `lastIndex`. Shared: set `lastIndex` before each use. */
  document: RegExp;
}

const shapes = new Map<string, Shape>();
const MAX_SHAPES = 4096;

/**
 * The shape of documents holding `fields` (any order, as the engine orders them by its field
 * ids), followed by `end`: `}`, or the catalogue version's field and then `}`.
 */
function shapeOf(fields: readonly QuoteField[], end = '}'): Shape {
  const name = `${fields.join(',')}${end}`;
  let shape = shapes.get(name);
  if (shape === undefined) {
    const wanted = new Set(fields);
    const ordered = QUOTE_FIELDS.filter((field) => wanted.has(field));
    const source = ordered
      .map((field, i) => {
        const property = `${literal(`${i === 0 ? '' : ','}"${field}":`)}${VALUE_SOURCES[KINDS[field]]}`;
        // A quote whose record gave no language has no such property: the serialiser writes
        // none either, and `language` comes last.
        return `${i === 0 ? '\\{' : ''}${field === 'language' ? `(?:${property})?` : property}`;
      })
      .join('');
    shape = { document: new RegExp(`${source}${literal(end)}`, 'y') };
    // Projections are subsets of twelve fields, written in one order: few distinct names per
    // catalogue version. Each reindex brings a version and its shapes, so a full table starts
    // afresh rather than leave the version now served compiling its expressions on every page.
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(name, shape);
  }
  return shape;
}

/** `text` matched literally. */
function literal(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/**
 * A string whose escapes are exactly JSON.stringify's: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`,
 * and `\u00xx` (lower-case hex) for the other control characters (0x00 to 0x07, 0x0b, 0x0e to
 * 0x1f). Contents are not checked otherwise: the engine writes every control character escaped
 * (a raw one is not JSON at all). Written as a run of plain characters between escapes, so that
 * nothing is ever read twice.
 */
const STRING_SOURCE = String.raw`"[^"\\]*(?:\\(?:["\\bfnrt]|u00(?:0[0-7bef]|1[0-9a-f]))[^"\\]*)*"`;

const VALUE_SOURCES: Record<Kind, string> = {
  // A non-negative safe integer as `String(n)` writes it: no sign, leading zero, fraction or
  // exponent. Ids and lengths are positive: a sign is no answer of this catalogue's. What
  // follows it in the shape (`,` or `}`) refuses a 16th digit.
  integer: '(?:0|[1-9][0-9]{0,14})',
  string: STRING_SOURCE,
  strings: String.raw`\[(?:${STRING_SOURCE}(?:,${STRING_SOURCE})*)?\]`,
};

const RESULTS = '{"results":[';
const TAIL = /,"offset":\d{1,15},"limit":\d{1,15},"total":(0|[1-9]\d{0,14})\}$/y;

const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACKET = 0x5b;

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
  const page = readResults(body.toString('latin1'), shapeOf(fields, end));
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
  { document }: Shape,
): { spans: number[]; close: number; total: number } | undefined {
  if (!text.startsWith(RESULTS)) return undefined;
  const spans: number[] = [];
  let at = RESULTS.length;
  if (text.charCodeAt(at) !== CLOSE_BRACKET) {
    for (;;) {
      if (!matchesAt(document, text, at)) return undefined;
      spans.push(at, document.lastIndex);
      at = document.lastIndex;
      const next = text.charCodeAt(at);
      if (next === CLOSE_BRACKET) break;
      if (next !== COMMA) return undefined;
      at++;
    }
  }
  TAIL.lastIndex = at + 1;
  const tail = TAIL.exec(text);
  if (tail === null) return undefined;
  return { spans, close: at, total: Number(tail[1]) };
}

/**
 * Whether a `GET /documents/{id}` answer is one document holding `fields` exactly as the route's
 * serialiser writes the quote.
 */
export function isRawDocument(body: Buffer, fields: readonly QuoteField[]): boolean {
  const text = body.toString('latin1');
  const { document } = shapeOf(fields);
  return matchesAt(document, text, 0) && document.lastIndex === text.length;
}

/**
 * Whether `document` matches at `at` (its `lastIndex` then past the match). A string of millions
 * of escapes overflows the expression's backtracking stack: such an answer is not passed
 * through, and the caller reads it the plain way.
 */
function matchesAt(document: RegExp, text: string, at: number): boolean {
  document.lastIndex = at;
  try {
    return document.test(text);
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}
