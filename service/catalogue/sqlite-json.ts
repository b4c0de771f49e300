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
import { QUOTE_FIELDS, type QuoteField } from './port.ts';
import type { CatalogueColumns, CodedField } from './sqlite-query.ts';

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

/** Values escaped once, back to back in one buffer: value i is [bounds[i], bounds[i + 1]). */
export class JsonFragments {
  readonly #bytes: Buffer;
  readonly #bounds: Uint32Array;

  constructor(values: readonly (string | readonly string[])[]) {
    const texts = values.map((value) => JSON.stringify(value));
    this.#bytes = Buffer.from(texts.join(''));
    this.#bounds = new Uint32Array(texts.length + 1);
    let at = 0;
    for (const [i, text] of texts.entries()) {
      at += Buffer.byteLength(text);
      this.#bounds[i + 1] = at;
    }
  }

  write(writer: JsonWriter, code: number): void {
    writer.copy(this.#bytes, this.#bounds[code] as number, this.#bounds[code + 1] as number);
  }
}

/** Where the JSON of a quote's `source` and `quote` come from. */
export interface JsonTexts {
  /** Writes the escaped JSON string of `field` of the quote at `ord`. */
  write(writer: JsonWriter, ord: number, field: 'source' | 'quote'): void;
}

/** `{"name":` opens a quote; `,"name":` follows a previous property. */
const KEYS_FIRST = new Map<QuoteField, Buffer>(QUOTE_FIELDS.map((f) => [f, Buffer.from(`{"${f}":`)]));
const KEYS_NEXT = new Map<QuoteField, Buffer>(QUOTE_FIELDS.map((f) => [f, Buffer.from(`,"${f}":`)]));

const CODED_FIELDS: readonly CodedField[] = ['author', 'work', 'category', 'genre', 'publish_date'];
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** Writes quotes of one catalogue file as JSON. */
export class QuoteJson {
  readonly #columns: CatalogueColumns;
  readonly #fragments = new Map<CodedField, JsonFragments>();

  /** Escapes every display value now: once per file, while it is being opened. */
  constructor(columns: CatalogueColumns) {
    this.#columns = columns;
    for (const field of CODED_FIELDS)
      this.#fragments.set(field, new JsonFragments(columns.displayValues(field)));
  }

  /**
   * A JSON array of the quotes at `ords`, each with `fields` (in QUOTE_FIELDS order, as
   * normaliseFields returns them).
   */
  array(writer: JsonWriter, ords: readonly number[], fields: readonly QuoteField[], texts: JsonTexts): void {
    // Each property's name with the punctuation before it (`{"id":`, `,"author":`), once per page.
    const names = fields.map((field, i) => (i === 0 ? KEYS_FIRST : KEYS_NEXT).get(field) as Buffer);
    writer.byte(OPEN_BRACKET);
    for (let i = 0; i < ords.length; i++) {
      if (i > 0) writer.byte(COMMA);
      this.#quote(writer, ords[i] as number, fields, names, texts);
    }
    writer.byte(CLOSE_BRACKET);
  }

  #quote(
    writer: JsonWriter,
    ord: number,
    fields: readonly QuoteField[],
    names: readonly Buffer[],
    texts: JsonTexts,
  ): void {
    const columns = this.#columns;
    if (fields.length === 0) writer.byte(OPEN_BRACE);
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i] as QuoteField;
      const name = names[i] as Buffer;
      writer.copy(name, 0, name.length);
      switch (field) {
        case 'id':
          writer.integer(columns.id(ord));
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
        case 'source':
        case 'quote':
          texts.write(writer, ord, field);
          break;
        default:
          (this.#fragments.get(field as CodedField) as JsonFragments).write(
            writer,
            columns.code(ord, field as CodedField),
          );
      }
    }
    writer.byte(CLOSE_BRACE);
  }
}
