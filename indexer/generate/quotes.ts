/** The generated quotes: drawn one at a time, as objects or as NDJSON bytes. */
import type { Writable } from 'node:stream';
import type { Quote } from '../../service/catalogue/port.ts';
import {
  type Author,
  buildCatalogue,
  type Catalogue,
  checkCount,
  checkSeed,
  DEFAULT_SEED,
  sourceOf,
  type Work,
} from './catalogue.ts';
import { Random, searchCumulative } from './random.ts';
import { quoteText, TextBuilder } from './text.ts';

/** A generated record: a contract Quote without `quote_length`, which the indexer computes. */
export type GeneratedQuote = Omit<Quote, 'quote_length'>;

/**
 * Yields `count` quotes with ids 1..count in order, deterministic in (count, seed). The catalogue
 * of authors and works is built first; then each quote picks an author by popularity, one of
 * that author's works by popularity, and a fresh text. Records are new objects the caller owns.
 * Throws RangeError for a count outside 1..{@link MAX_COUNT} or a seed outside 0..2^32-1.
 */
export function* generateQuotes(count: number, seed: number = DEFAULT_SEED): Generator<GeneratedQuote> {
  const draws = new Draws(count, seed);
  while (draws.next()) {
    const { author, work } = draws;
    yield {
      id: draws.id,
      author: author.name,
      author_id: author.id,
      work: work.title,
      work_id: work.id,
      category: work.category,
      genre: work.genre.slice(),
      publish_date: work.publishDate,
      source: sourceOf(work.id),
      quote: draws.text.toString(),
      language: author.language,
    };
  }
}

/**
 * The quotes of {@link generateQuotes} one at a time, without allocating per quote: `next()`
 * advances and sets `id`, `author`, `work` and `text` (valid until the following `next()`).
 */
class Draws {
  id = 0;
  author: Author;
  work: Work;
  readonly text = new TextBuilder();
  readonly #count: number;
  readonly #rng: Random;
  readonly #catalogue: Catalogue;

  constructor(count: number, seed: number) {
    checkCount(count);
    checkSeed(seed);
    this.#count = count;
    this.#rng = new Random(seed);
    this.#catalogue = buildCatalogue(count, this.#rng);
    this.author = this.#catalogue.authors[0] as Author;
    this.work = this.#catalogue.works[0] as Work;
  }

  next(): boolean {
    if (this.id >= this.#count) return false;
    const rng = this.#rng;
    const { authors, authorCumulative, works, workCumulative } = this.#catalogue;
    this.id++;
    this.author = authors[searchCumulative(authorCumulative, 0, authors.length, rng.float())] as Author;
    const position = searchCumulative(
      workCumulative,
      this.author.firstWork,
      this.author.endWork,
      rng.float(),
    );
    this.work = works[position] as Work;
    quoteText(rng, this.text, this.work.category === 'poetry');
    return true;
  }
}

/** Bytes gathered before one write: enough to amortise the call, small enough to stream. */
const CHUNK_BYTES = 1 << 18;
const LINE_START = Buffer.from('{"id":');
const QUOTE_KEY = Buffer.from(',"quote":"');
const COMMA = 0x2c;

/**
 * Writes `count` quotes as NDJSON to `out`: each line is exactly `JSON.stringify(record) + '\n'`
 * for the record {@link generateQuotes} yields, assembled from bytes serialised once per author
 * and work (texts never need escaping, see {@link piece}). Waits for 'drain' whenever `write`
 * returns false, and yields to the event loop after other writes, since pipes and files may
 * complete synchronously and report a closed reader (EPIPE) only through an 'error' event.
 * Rejects with the stream's error and stops generating at once; does not end the stream.
 */
export async function writeQuotes(out: Writable, count: number, seed: number = DEFAULT_SEED): Promise<void> {
  let failure: Error | undefined;
  const onError = (error: Error) => {
    failure ??= error;
  };
  out.on('error', onError);
  const check = () => {
    const error = failure ?? out.errored;
    if (error) throw error;
    if (out.destroyed) throw closedError();
  };
  try {
    const draws = new Draws(count, seed);
    let chunk: Buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let used = 0;
    while (draws.next()) {
      const { author, work, text } = draws;
      const size = 40 + author.lineEnd.length + 3 * (author.json.length + work.json.length) + text.length;
      if (used + size > CHUNK_BYTES) {
        check();
        if (out.write(chunk.subarray(0, used))) await new Promise<void>((resolve) => setImmediate(resolve));
        else await drained(out);
        // Never reused: a stream may keep the chunk after its callback (a PassThrough does).
        chunk = Buffer.allocUnsafe(CHUNK_BYTES);
        used = 0;
      }
      chunk.set(LINE_START, used);
      used += LINE_START.length;
      used += chunk.write(String(draws.id), used, 'latin1');
      chunk[used++] = COMMA;
      used += chunk.write(author.json, used);
      chunk[used++] = COMMA;
      used += chunk.write(work.json, used);
      chunk.set(QUOTE_KEY, used);
      used += QUOTE_KEY.length;
      used = text.copyTo(chunk, used);
      chunk.set(author.lineEnd, used);
      used += author.lineEnd.length;
    }
    check();
    if (used > 0 && !out.write(chunk.subarray(0, used))) await drained(out);
    check();
  } finally {
    out.off('error', onError);
  }
}

function closedError(): Error {
  return Object.assign(new Error('output stream closed'), { code: 'ERR_STREAM_DESTROYED' });
}

/** Resolves on 'drain'; rejects if the stream fails or closes first, when no 'drain' would come. */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: Error | null) => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(out.errored ?? closedError());
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}
