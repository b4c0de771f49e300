/**
 * The display texts (`source`, `quote`) of a catalogue file, copied into memory when they fit a
 * budget.
 *
 * Why: reading the texts of a page from SQLite costs 2 to 3 µs per quote (a B-tree seek per id,
 * whatever the SQL), which was the largest single cost of an uncached list request. From memory
 * it is a slice of one buffer. The budget (`SQLITE_TEXT_MEMORY_MB`) keeps the resident memory
 * bounded: a catalogue whose texts do not fit keeps reading them from the file, as before.
 *
 * The texts are held as their escaped JSON strings (what a response carries), so that a list
 * answer copies them as they are (sqlite/json.ts); the few answers built as objects parse them.
 * Each quote's pair is kept as a quote with both fields writes it, `source,"quote":quote`, so
 * that the usual answer copies the two in one go.
 *
 * The copy is made in the background, in slices of a few milliseconds between requests, so
 * opening or reloading a file never stalls the service; until the copy is complete every read
 * goes to SQLite. The copy checks that the file's texts line up with its columns (one row per
 * quote, in id order) and is dropped if they do not, leaving the SQLite path to report it.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { type JsonTexts, type JsonWriter, QUOTE_KEY } from './json.ts';

/** Where the texts are read from, and why. */
export type TextMemoryState =
  | { state: 'loading' }
  | { state: 'memory'; bytes: number }
  | { state: 'disk'; reason: string };

/** Rows read per statement call while copying; each slice also stops after {@link SLICE_MS}. */
const ROWS_PER_READ = 512;
const SLICE_MS = 4;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_BYTES_PER_UNIT = 3;
/** Bytes between a quote's source and quote in memory. */
const SEPARATOR = Buffer.byteLength(QUOTE_KEY);

export interface TextMemoryOptions {
  db: DatabaseSync;
  /** The quotes' ids in ord order (ascending), as the columns hold them. */
  ids: Float64Array;
  /** Upper bound of the texts' UTF-8 size: the file's size less what the columns took. */
  estimatedBytes: number;
  /** Largest number of bytes the texts may take in memory; 0 keeps them on disk. */
  budgetBytes: number;
  /** Called once the texts are in memory or will stay on disk. */
  onSettled?: (state: TextMemoryState) => void;
}

/** The texts of one catalogue file, in memory once {@link TextMemory.ready}. */
export class TextMemory implements JsonTexts {
  readonly #db: DatabaseSync;
  readonly #ids: TextMemoryOptions['ids'];
  readonly #onSettled: TextMemoryOptions['onSettled'];
  readonly #budget: number;
  /**
   * source of ord i: [bounds[2i], bounds[2i+1] - SEPARATOR); quote: [bounds[2i+1], bounds[2i+2]),
   * with QUOTE_KEY between them.
   */
  #bounds: Uint32Array | null = null;
  #bytes: Buffer | null = null;
  #state: TextMemoryState = { state: 'loading' };
  #stopped = false;
  readonly #settled: Promise<TextMemoryState>;
  #resolve!: (state: TextMemoryState) => void;

  constructor(options: TextMemoryOptions) {
    this.#db = options.db;
    this.#ids = options.ids;
    this.#onSettled = options.onSettled;
    this.#budget = options.budgetBytes;
    this.#settled = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    const n = options.ids.length;
    const estimated = options.estimatedBytes + SEPARATOR * n;
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    if (options.budgetBytes <= 0) {
      this.#settle({ state: 'disk', reason: 'SQLITE_TEXT_MEMORY_MB is 0' });
    } else if (estimated > options.budgetBytes) {
      this.#settle({
        state: 'disk',
        reason: `the texts take up to ${mb(estimated)}, over the budget of ${mb(options.budgetBytes)}`,
      });
    } else if (n === 0) {
      this.#settle({ state: 'disk', reason: 'the catalogue is empty' });
    } else {
      this.#bounds = new Uint32Array(2 * n + 1);
      this.#bytes = Buffer.allocUnsafeSlow(Math.max(1024, Math.ceil(estimated)));
      const read = this.#db.prepare('SELECT id, source, quote FROM texts WHERE id > ? ORDER BY id LIMIT ?');
      read.setReturnArrays(true);
      read.setReadBigInts(false);
      setImmediate(() => this.#copy(read, 0, 0, Number.NEGATIVE_INFINITY));
    }
  }

  /** True once every text is in memory; until then (and forever when on disk) read SQLite. */
  get ready(): boolean {
    return this.#state.state === 'memory';
  }

  get state(): TextMemoryState {
    return this.#state;
  }

  /** Resolves once the texts are in memory or known to stay on disk. */
  settled(): Promise<TextMemoryState> {
    return this.#settled;
  }

  /** `source` or `quote` of the quote at `ord`; only when {@link ready}. */
  text(ord: number, field: 'source' | 'quote'): string {
    const bytes = this.#bytes as Buffer;
    return JSON.parse(bytes.toString('utf8', this.#start(ord, field), this.#end(ord, field))) as string;
  }

  /** The escaped JSON string of `source` or `quote` of the quote at `ord`; only when {@link ready}. */
  write(writer: JsonWriter, ord: number, field: 'source' | 'quote'): void {
    writer.copy(this.#bytes as Buffer, this.#start(ord, field), this.#end(ord, field));
  }

  /** `source,"quote":quote` of the quote at `ord`, escaped, in one copy; only when {@link ready}. */
  writeSourceAndQuote(writer: JsonWriter, ord: number): void {
    writer.copy(this.#bytes as Buffer, this.#start(ord, 'source'), this.#end(ord, 'quote'));
  }

  // Two methods rather than one returning a pair: no array per text on the list path.
  #start(ord: number, field: 'source' | 'quote'): number {
    return (this.#bounds as Uint32Array)[2 * ord + (field === 'source' ? 0 : 1)] as number;
  }

  #end(ord: number, field: 'source' | 'quote'): number {
    const bounds = this.#bounds as Uint32Array;
    return field === 'source' ? (bounds[2 * ord + 1] as number) - SEPARATOR : (bounds[2 * ord + 2] as number);
  }

  /** Stops a copy in progress (the file is being closed) and releases the memory. */
  stop(): void {
    this.#stopped = true;
    if (this.#state.state === 'loading') this.#settle({ state: 'disk', reason: 'the file was closed' });
    this.#bounds = null;
    this.#bytes = null;
  }

  /** Copies rows from `ord` on (the next id is above `lastId`) for one slice, then yields. */
  #copy(read: StatementSync, ord: number, at: number, lastId: number): void {
    if (this.#stopped) return;
    const ids = this.#ids;
    const n = ids.length;
    const bounds = this.#bounds as Uint32Array;
    const began = performance.now();
    let failure: string | null = null;
    try {
      copying: while (ord < n && performance.now() - began < SLICE_MS) {
        const rows = read.all(lastId, ROWS_PER_READ) as unknown as [number, string, string][];
        if (rows.length === 0) break;
        for (const [id, source, quote] of rows) {
          if (ord >= n || id !== ids[ord]) {
            failure = `texts row of id ${id} does not match the columns`;
            break copying;
          }
          bounds[2 * ord] = at;
          at = this.#append(`${JSON.stringify(source)}${QUOTE_KEY}`, at);
          bounds[2 * ord + 1] = at;
          at = this.#append(JSON.stringify(quote), at);
          if (at < 0) {
            failure = 'the texts exceed the budget of SQLITE_TEXT_MEMORY_MB';
            break copying;
          }
          ord++;
          lastId = id;
        }
      }
    } catch (error) {
      failure = `reading the texts failed: ${(error as Error).message}`;
    }
    if (failure === null && ord < n && performance.now() - began >= SLICE_MS) {
      setImmediate(() => this.#copy(read, ord, at, lastId));
    } else if (failure !== null || ord < n) {
      this.#abandon(failure ?? `the file holds texts for ${ord} of ${n} quotes`);
    } else {
      bounds[2 * n] = at;
      // The buffer is sized by the estimate, which counts the file's own overhead too. Its tail
      // was never written, so its pages were never touched and take no resident memory:
      // copying the texts into an exact-size buffer would only double them for a moment.
      this.#settle({ state: 'memory', bytes: at + bounds.byteLength });
    }
  }

  /**
   * Writes `text` at `at`, returning the next offset, or -1 past the budget (or 4 GB, the reach
   * of the bounds). Escaping can make the texts a little larger than their share of the file.
   */
  #append(text: string, at: number): number {
    if (at < 0) return -1;
    let bytes = this.#bytes as Buffer;
    if (at + text.length * MAX_BYTES_PER_UNIT > bytes.length) {
      const needed = at + Buffer.byteLength(text);
      if (needed > bytes.length) {
        const size = Math.max(needed, Math.min(this.#budget, Math.ceil(bytes.length * 1.25)));
        if (needed > this.#budget || size >= 2 ** 32) return -1;
        const grown = Buffer.allocUnsafeSlow(size);
        bytes.copy(grown, 0, 0, at);
        this.#bytes = bytes = grown;
      }
    }
    return at + bytes.write(text, at);
  }

  #abandon(reason: string): void {
    this.#bounds = null;
    this.#bytes = null;
    this.#settle({ state: 'disk', reason });
  }

  #settle(state: TextMemoryState): void {
    if (this.#state.state !== 'loading') return;
    this.#state = state;
    this.#resolve(state);
    this.#onSettled?.(state);
  }
}
