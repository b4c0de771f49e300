/**
 * JSON text of quotes written straight from the embedded catalogue's columns: the list routes'
 * fast path (port: `CatalogueIndex.listJson`).
 *
 * Why: building an object per quote, serialising it to a string and encoding that string to
 * UTF-8 took about a third of the CPU time of an uncached list request. Here every display
 * value is escaped once per catalogue file, and a page is a run of byte copies.
 *
 * The output is exactly what the route's compiled serialiser makes of the projected objects:
 * properties in QUOTE_FIELDS order (the schema's order), strings escaped as `JSON.stringify`
 * escapes them, integers in decimal, no white space. `service/routes/json-path.test.ts` checks
 * this byte for byte against the serialiser.
 */
import { QUOTE_FIELDS, type QuoteField } from '../port.ts';
import type { CatalogueColumns, CodedField } from './query.ts';
import { PROFILE_KEYS } from './schema.ts';

/** Appends bytes to a buffer that grows as needed. Reused: {@link take} copies the result out. */
export class JsonWriter {
  #buffer: Buffer;
  #at = 0;

  constructor(initialBytes = 64 * 1024) {
    this.#buffer = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Starts over, keeping the buffer. */
  reset(): this {
    this.#at = 0;
    return this;
  }

  /** A byte of ASCII punctuation. */
  byte(value: number): void {
    this.#reserve(1);
    this.#buffer[this.#at++] = value;
  }

  /** `source[start, end)`. */
  copy(source: Buffer, start: number, end: number): void {
    const length = end - start;
    this.#reserve(length);
    if (length < 48) {
      // Below a few dozen bytes the native call costs more than the copy.
      const buffer = this.#buffer;
      let at = this.#at;
      for (let i = start; i < end; i++) buffer[at++] = source[i] as number;
      this.#at = at;
    } else {
      this.#at += (source as Buffer).copy(this.#buffer, this.#at, start, end);
    }
  }

  /** A non-negative safe integer in decimal, as `String(n)` writes it. */
  integer(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) {
      this.utf8(String(n));
      return;
    }
    this.#reserve(16);
    const buffer = this.#buffer;
    let digits = 1;
    for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    let at = this.#at + digits;
    this.#at = at;
    let rest = n;
    do {
      buffer[--at] = 48 + (rest % 10);
      rest = Math.floor(rest / 10);
    } while (rest > 0);
  }

  /** A string's UTF-8 bytes, as is (the caller escapes). */
  utf8(text: string): void {
    this.#reserve(text.length * 3);
    this.#at += this.#buffer.write(text, this.#at);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#at;
  }

  /** The bytes written so far, in a buffer of their own. */
  take(): Buffer {
    const out = Buffer.allocUnsafeSlow(this.#at);
    this.#buffer.copy(out, 0, 0, this.#at);
    return out;
  }

  #reserve(length: number): void {
    if (this.#at + length <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.#buffer.length * 2, this.#at + length));
    this.#buffer.copy(grown, 0, 0, this.#at);
    this.#buffer = grown;
  }
}

/** JSON texts back to back in one buffer: text i is [bounds[i], bounds[i + 1]). */
export class JsonFragments {
  readonly #bytes: Buffer;
  readonly #bounds: Uint32Array;

  /** Each value as `JSON.stringify` writes it. */
  static of(values: readonly (string | readonly string[])[]): JsonFragments {
    return JsonFragments.build(values.length, (writer, i) => writer.utf8(JSON.stringify(values[i])));
  }

  /**
   * `count` texts, the i-th whatever `write(writer, i)` appends. Written straight into one
   * buffer: an array of strings joined at the end held every text at once on the JS heap, whose
   * pages the process kept after they were collected (at a million quotes the profiles took
   * 87 MB of heap for 8 MB of JSON, and the service's RSS kept it).
   */
  static build(count: number, write: (writer: JsonWriter, i: number) => void): JsonFragments {
    const writer = new JsonWriter();
    const bounds = new Uint32Array(count + 1);
    for (let i = 0; i < count; i++) {
      write(writer, i);
      bounds[i + 1] = writer.length;
    }
    return new JsonFragments(writer.take(), bounds);
  }

  private constructor(bytes: Buffer, bounds: Uint32Array) {
    this.#bytes = bytes;
    this.#bounds = bounds;
  }

  write(writer: JsonWriter, code: number): void {
    writer.copy(this.#bytes, this.#bounds[code] as number, this.#bounds[code + 1] as number);
  }
}

/** Where the JSON of a quote's `source` and `quote` come from. */
export interface JsonTexts {
  /** Writes the escaped JSON string of `field` of the quote at `ord`. */
  write(writer: JsonWriter, ord: number, field: 'source' | 'quote'): void;
  /** Writes both, as a quote with both has them: the source, {@link QUOTE_KEY}, the quote. */
  writeSourceAndQuote(writer: JsonWriter, ord: number): void;
}

/** What comes between a quote's `source` and its `quote` when it has both. */
export const QUOTE_KEY = ',"quote":';

/** `{"name":` opens a quote; `,"name":` follows a previous property. */
const KEYS_FIRST = new Map<QuoteField, Buffer>(QUOTE_FIELDS.map((f) => [f, Buffer.from(`{"${f}":`)]));
const KEYS_NEXT = new Map<QuoteField, Buffer>(QUOTE_FIELDS.map((f) => [f, Buffer.from(`,"${f}":`)]));
const OPENING = Buffer.from('{');
const COMMA_BYTES = Buffer.from(',');

const CODED_FIELDS: readonly CodedField[] = [
  'author',
  'work',
  'category',
  'genre',
  'publish_date',
  'language',
];
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * What one property (or run of properties) of every quote of a page is: the bytes before it
 * (`{"id":`, `,"author":`, or `{`/`,` before a fragment that names its own properties) and what
 * writes the value.
 */
type Step = { name: Buffer; value: QuoteField | 'profile' | 'source+quote' };

/** Writes quotes of one catalogue file as JSON. */
export class QuoteJson {
  readonly #columns: CatalogueColumns;
  readonly #fragments = new Map<CodedField, JsonFragments>();
  /** Per profile, `"author":…,"publish_date":…`: seven properties in one copy. */
  readonly #profiles: JsonFragments;

  /** The code of the empty language, held by the quotes whose record gave none; -1 if none did. */
  readonly #noLanguage: number;

  /** Escapes every display value now: once per file, while it is being opened. */
  constructor(columns: CatalogueColumns) {
    this.#columns = columns;
    this.#noLanguage = columns.displayValues('language').indexOf('');
    for (const field of CODED_FIELDS)
      this.#fragments.set(field, JsonFragments.of(columns.displayValues(field)));
    const value = (writer: JsonWriter, field: CodedField, ord: number) =>
      (this.#fragments.get(field) as JsonFragments).write(writer, columns.code(ord, field));
    this.#profiles = JsonFragments.build(columns.profileCount, (writer, profile) => {
      const ord = columns.firstOrdOf(profile);
      writer.utf8('"author":');
      value(writer, 'author', ord);
      writer.utf8(',"author_id":');
      writer.integer(columns.authorId(ord));
      writer.utf8(',"work":');
      value(writer, 'work', ord);
      writer.utf8(',"work_id":');
      writer.integer(columns.workId(ord));
      writer.utf8(',"category":');
      value(writer, 'category', ord);
      writer.utf8(',"genre":');
      value(writer, 'genre', ord);
      writer.utf8(',"publish_date":');
      value(writer, 'publish_date', ord);
    });
  }

  /**
   * A JSON array of the quotes at `ords`, each with `fields` (in QUOTE_FIELDS order, as
   * normaliseFields returns them).
   */
  array(writer: JsonWriter, ords: readonly number[], fields: readonly QuoteField[], texts: JsonTexts): void {
    const steps = plan(fields);
    writer.byte(OPEN_BRACKET);
    for (let i = 0; i < ords.length; i++) {
      if (i > 0) writer.byte(COMMA);
      this.#quote(writer, ords[i] as number, steps, texts);
    }
    writer.byte(CLOSE_BRACKET);
  }

  #quote(writer: JsonWriter, ord: number, steps: readonly Step[], texts: JsonTexts): void {
    const columns = this.#columns;
    if (steps.length === 0) writer.copy(OPENING, 0, 1);
    for (let i = 0; i < steps.length; i++) {
      const { name, value } = steps[i] as Step;
      if (value === 'language' && columns.code(ord, 'language') === this.#noLanguage) {
        // A quote without a language has no such property; `language` comes last, so nothing follows.
        if (i === 0) writer.copy(OPENING, 0, 1);
        continue;
      }
      writer.copy(name, 0, name.length);
      switch (value) {
        case 'id':
          writer.integer(columns.id(ord));
          break;
        case 'profile':
          this.#profiles.write(writer, columns.profileOf(ord));
          break;
        case 'author_id':
          writer.integer(columns.authorId(ord));
          break;
        case 'work_id':
          writer.integer(columns.workId(ord));
          break;
        case 'quote_length':
          writer.integer(columns.quoteLength(ord));
          break;
        case 'source+quote':
          texts.writeSourceAndQuote(writer, ord);
          break;
        case 'source':
        case 'quote':
          texts.write(writer, ord, value);
          break;
        default:
          (this.#fragments.get(value) as JsonFragments).write(writer, columns.code(ord, value));
      }
    }
    writer.byte(CLOSE_BRACE);
  }
}

/** The steps that write a quote with `fields`, runs of properties merged where a fragment has them. */
function plan(fields: readonly QuoteField[]): Step[] {
  const steps: Step[] = [];
  // The fields a profile decides: a projection with all of them gets them as one fragment.
  const hasProfile = PROFILE_KEYS.every((field) => fields.includes(field));
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as QuoteField;
    const first = steps.length === 0;
    if (field === 'author' && hasProfile) {
      // In QUOTE_FIELDS order the profile fields are adjacent, author first: nothing else comes
      // between them (the fragment is written in that order too).
      steps.push({ name: first ? OPENING : COMMA_BYTES, value: 'profile' });
      i += PROFILE_KEYS.length - 1;
    } else if (field === 'source' && fields[i + 1] === 'quote') {
      steps.push({ name: (first ? KEYS_FIRST : KEYS_NEXT).get('source') as Buffer, value: 'source+quote' });
      i++;
    } else {
      steps.push({ name: (first ? KEYS_FIRST : KEYS_NEXT).get(field) as Buffer, value: field });
    }
  }
  return steps;
}
