/**
 * Reads the records of a data file, streamed: memory stays flat whatever the file's size.
 *
 * Two formats, told apart by the first character that is not white space:
 * - `[` a JSON array of objects. Syntax errors are fatal ({@link IndexInputError}): once the
 *   structure is broken no later record boundary can be trusted.
 * - `{` NDJSON, one object per line; blank lines are skipped. A line that is not valid JSON is
 *   reported as a problem of that record and reading goes on, so one run lists every bad line.
 *
 * The file must be UTF-8 (a byte-order mark is allowed).
 */
import { type FileHandle, open } from 'node:fs/promises';
import { CodedError } from '../service/coded-error.ts';

/** The input file cannot be used at all: missing, unreadable, not JSON/NDJSON, empty. One line. */
export class IndexInputError extends CodedError {
  override name = 'IndexInputError';
  readonly code = 'unreadable_input';
}

/** One record as read: its parsed value, or why it could not be parsed (NDJSON only). */
export interface RawRecord {
  /** 1-based number of the record in the file (blank NDJSON lines do not count). */
  record: number;
  /** 1-based line where the record starts. */
  line: number;
  /** Set when `error` is not. */
  value?: unknown;
  /** Why the record could not be parsed. */
  error?: string;
}

export type DataFormat = 'json' | 'ndjson';

/** An opened data file. Iterate {@link RecordSource.batches} once, then {@link RecordSource.close}. */
export interface RecordSource {
  readonly format: DataFormat;
  /** Size of the file in bytes (0 when unknown, e.g. a pipe). */
  readonly totalBytes: number;
  /** Bytes consumed so far. */
  readonly bytesRead: number;
  /** The records, a chunk's worth per batch, in file order. */
  batches(): AsyncGenerator<RawRecord[]>;
  /** Releases the file. Idempotent. */
  close(): Promise<void>;
}

/**
 * A record (NDJSON line or array element) longer than this is reported and skipped without
 * being held in memory, so a file without line breaks cannot exhaust memory. Valid quotes are
 * far smaller (a quote is at most 10,000 characters).
 */
export const MAX_RECORD_CHARS = 1 << 20;

/**
 * Bytes read at a time. Kept well under 1 MB: Node hands larger decoded strings to V8 as external
 * strings, whose memory V8 reclaims lazily (measured: tens of MB more at peak on 1M records).
 */
const CHUNK_BYTES = 1 << 18;
const BOM = 0xfeff;

/**
 * Opens a data file and detects its format. Throws {@link IndexInputError} when the file is
 * missing, unreadable, a directory, empty, or starts with neither `[` nor `{`.
 */
export async function openRecords(file: string): Promise<RecordSource> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new IndexInputError(`cannot open ${file}: ${describeFsError(error)}`);
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new IndexInputError(`cannot read ${file}: it is a directory`);
    const source = new FileRecords(file, handle, stat.isFile() ? stat.size : 0);
    await source.detect();
    return source;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}

/** Keeps parser messages to one short line: they can quote a long stretch of the input. */
function shortJsonError(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

class FileRecords implements RecordSource {
  format: DataFormat = 'ndjson';
  readonly totalBytes: number;
  bytesRead = 0;
  readonly #file: string;
  readonly #handle: FileHandle;
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  readonly #buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Text decoded while detecting the format, handed to the first batch. */
  #pending = '';
  #eof = false;
  #closed = false;

  constructor(file: string, handle: FileHandle, totalBytes: number) {
    this.#file = file;
    this.#handle = handle;
    this.totalBytes = totalBytes;
  }

  async detect(): Promise<void> {
    for (;;) {
      const text = await this.#read();
      if (text === null) break;
      this.#pending += text;
      const start = firstNonSpace(this.#pending);
      if (start === -1) continue;
      const c = this.#pending[start];
      if (c === '[') this.format = 'json';
      else if (c === '{') this.format = 'ndjson';
      else {
        throw new IndexInputError(
          `${this.#file} is neither a JSON array nor NDJSON: it starts with '${c}', expected '[' or '{'`,
        );
      }
      return;
    }
    throw new IndexInputError(`${this.#file} is empty: no records to index`);
  }

  /** The next decoded chunk, or null at the end of the file. */
  async #read(): Promise<string | null> {
    if (this.#eof) return null;
    let bytesRead: number;
    try {
      ({ bytesRead } = await this.#handle.read(this.#buffer, 0, CHUNK_BYTES, null));
    } catch (error) {
      throw new IndexInputError(`cannot read ${this.#file}: ${describeFsError(error)}`);
    }
    const start = this.bytesRead;
    this.bytesRead += bytesRead;
    try {
      if (bytesRead === 0) {
        this.#eof = true;
        return this.#decoder.decode();
      }
      let text = this.#decoder.decode(this.#buffer.subarray(0, bytesRead), { stream: true });
      if (start === 0 && text.charCodeAt(0) === BOM) text = text.slice(1);
      return text;
    } catch {
      throw new IndexInputError(`${this.#file} is not valid UTF-8 (near byte ${start})`);
    }
  }

  /** Decoded chunks: the text kept from detection first, then the rest of the file. */
  async *#chunks(): AsyncGenerator<string> {
    if (this.#pending !== '') yield this.#pending;
    this.#pending = '';
    for (;;) {
      const text = await this.#read();
      if (text === null) return;
      if (text !== '') yield text;
    }
  }

  batches(): AsyncGenerator<RawRecord[]> {
    return this.format === 'json' ? readJsonArray(this.#chunks(), this.#file) : readNdjson(this.#chunks());
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}

function firstNonSpace(text: string): number {
  for (let i = 0; i < text.length; i++) {
    if (!isSpace(text.charCodeAt(i))) return i;
  }
  return -1;
}

/** JSON's white space: space, tab, line feed, carriage return. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** NDJSON: one record per non-blank line, parsed on its own. */
async function* readNdjson(chunks: AsyncIterable<string>): AsyncGenerator<RawRecord[]> {
  let partial = '';
  let oversized = false;
  let line = 0;
  let record = 0;
  const take = (text: string, out: RawRecord[]) => {
    line++;
    if (oversized || text.length > MAX_RECORD_CHARS) {
      oversized = false;
      record++;
      out.push({ record, line, error: `line is longer than ${MAX_RECORD_CHARS} characters` });
      return;
    }
    if (firstNonSpace(text) === -1) return;
    record++;
    try {
      out.push({ record, line, value: JSON.parse(text) });
    } catch (error) {
      out.push({ record, line, error: `not valid JSON: ${shortJsonError(error)}` });
    }
  };
  for await (const chunk of chunks) {
    const out: RawRecord[] = [];
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf('\n', from);
      if (nl === -1) break;
      take(partial === '' ? chunk.slice(from, nl) : partial + chunk.slice(from, nl), out);
      partial = '';
      from = nl + 1;
    }
    if (!oversized) {
      partial += chunk.slice(from);
      if (partial.length > MAX_RECORD_CHARS) {
        // Forget the text but remember the line was too long, to report it when it ends.
        oversized = firstNonSpace(partial) !== -1;
        partial = '';
      }
    }
    if (out.length > 0) yield out;
  }
  const out: RawRecord[] = [];
  if (partial !== '' || oversized) take(partial, out);
  if (out.length > 0) yield out;
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LINE_FEED = 0x0a;
/** What ends a run of ordinary characters inside a JSON string (a raw line feed is invalid there, but counts as a line). */
const STRING_SPECIAL = /["\\\n]/g;

/**
 * A JSON array, streamed: a small scanner finds where each top-level element ends (tracking
 * strings and nesting only), and each element is handed to JSON.parse on its own. The scanner
 * accepts nothing JSON.parse would reject at the array level (missing or doubled commas, text
 * after the closing bracket, an unclosed array).
 */
async function* readJsonArray(chunks: AsyncIterable<string>, file: string): AsyncGenerator<RawRecord[]> {
  let line = 1;
  /** 0 before `[`, 1 inside the array between elements, 2 after `]`. */
  let phase = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** The current element's text from earlier chunks. */
  let partial = '';
  let oversized = false;
  /** Index in the current chunk where the element starts, -1 when no element is open. */
  let start = -1;
  let elementLine = 0;
  let record = 0;
  /** A comma has been seen since the last element: another element must follow. */
  let expectElement = false;
  /** The open element is a complete object, array or string: only `,` or `]` may follow. */
  let complete = false;

  const fail = (message: string): never => {
    throw new IndexInputError(`${file} is not valid JSON: ${message} (line ${line})`);
  };
  const finish = (text: string, out: RawRecord[]) => {
    record++;
    if (oversized || text.length > MAX_RECORD_CHARS) {
      oversized = false;
      out.push({ record, line: elementLine, error: `record is longer than ${MAX_RECORD_CHARS} characters` });
      return;
    }
    try {
      out.push({ record, line: elementLine, value: JSON.parse(text) });
    } catch (error) {
      throw new IndexInputError(
        `${file} is not valid JSON in record ${record} (line ${elementLine}): ${shortJsonError(error)}`,
      );
    }
  };

  for await (const chunk of chunks) {
    const out: RawRecord[] = [];
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      if (inString) {
        if (escaped) {
          escaped = false;
          if (chunk.charCodeAt(i) === LINE_FEED) line++;
          continue;
        }
        // Strings are most of the text: jump to the next character that matters inside one.
        STRING_SPECIAL.lastIndex = i;
        const found = STRING_SPECIAL.exec(chunk);
        if (found === null) break;
        i = found.index;
        const s = chunk.charCodeAt(i);
        if (s === LINE_FEED) line++;
        else if (s === BACKSLASH) escaped = true;
        else {
          inString = false;
          if (depth === 0) complete = true;
        }
        continue;
      }
      const c = chunk.charCodeAt(i);
      if (c === LINE_FEED) line++;
      if (phase === 1 && depth === 0) {
        if (isSpace(c)) continue;
        if (start === -1 && partial === '' && !oversized) {
          // Between elements: only `,` `]` or the start of the next element may come.
          if (c === COMMA) {
            if (expectElement || record === 0) fail("unexpected ','");
            expectElement = true;
            continue;
          }
          if (c === CLOSE_BRACKET) {
            if (expectElement) fail("unexpected ']' after ','");
            phase = 2;
            continue;
          }
          start = i;
          elementLine = line;
          expectElement = false;
        } else if (c === COMMA || c === CLOSE_BRACKET) {
          // The element ends here; JSON.parse judges it (trailing white space is harmless).
          finish(partial + chunk.slice(start === -1 ? 0 : start, i), out);
          partial = '';
          start = -1;
          complete = false;
          if (c === COMMA) expectElement = true;
          else phase = 2;
          continue;
        } else if (complete) {
          fail(`expected ',' or ']' after record ${record + 1}`);
        }
      }
      if (phase === 0) {
        if (isSpace(c)) continue;
        if (c !== OPEN_BRACKET) fail("expected '['");
        phase = 1;
        continue;
      }
      if (phase === 2) {
        if (isSpace(c)) continue;
        fail('unexpected text after the closing bracket');
      }
      if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth < 0) fail(`unexpected '${String.fromCharCode(c)}'`);
        if (depth === 0) complete = true;
      }
    }
    if (start !== -1 || partial !== '') {
      if (!oversized) partial += chunk.slice(start === -1 ? 0 : start);
      start = -1;
      if (partial.length > MAX_RECORD_CHARS) {
        oversized = true;
        partial = '';
      }
    }
    if (out.length > 0) yield out;
  }
  if (phase !== 2) fail('unexpected end of file: the array is not closed');
}
