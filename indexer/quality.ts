/**
 * Data-quality checks across records, beside the contract's own rules (validate.ts): the faults
 * that creep into every catalogue assembled from several sources.
 *
 * - The same quote twice: the same folded text by the same (folded) author, whatever its id.
 * - One author spelled two ways: two names with the same folded form (`Charlotte Brontë` and
 *   `Charlotte Bronte`), which the contract's rules let through under two author_ids.
 * - One work spelled two ways: two titles with the same folded form by the same author.
 * - One work under two authors: the same folded title with the same source (the work's text or
 *   record) credited to two authors. A title alone does not say it: many authors wrote `Poems`.
 *
 * Each fault is reported on the later record, naming the earlier one, as a {@link Problem} like
 * the validator's. Memory stays small at a million quotes: quotes are remembered by a 53-bit
 * digest of their folded text and author in a typed-array table (about 24 MB; a false match needs
 * two different quotes with the same digest, about one chance in 20,000 for a million quotes),
 * names and titles by their folded forms.
 */
import { fold, type Quote } from '../service/catalogue/port.ts';
import type { Problem } from './validate.ts';

interface Spelling {
  display: string;
  record: number;
}

interface WorkCredit {
  author: string;
  record: number;
}

/** Checks records in file order; {@link QualityChecker.check} returns the faults of each. */
export class QualityChecker {
  /** Digest of (folded text, folded author) → the first record holding that quote. */
  readonly #quotes = new DigestTable();
  readonly #authors = new Map<string, Spelling>();
  /** `folded author \0 folded title` → the first spelling of the title. */
  readonly #works = new Map<string, Spelling>();
  /** `folded title \0 source` → the author first credited with it. */
  readonly #credits = new Map<string, WorkCredit>();
  /** Line of each record that was checked (0: unknown), to name the earlier record fully. */
  #lines = new Int32Array(1024);

  /** The faults of one valid quote against the records checked before it. */
  check(quote: Quote, record: number, line?: number): Problem[] {
    this.#remember(record, line);
    const problems: Problem[] = [];
    const fail = (field: string, message: string) => {
      const problem: Problem = { record, field, message };
      if (line !== undefined) problem.line = line;
      problems.push(problem);
    };
    const author = fold(quote.author);
    const work = fold(quote.work);

    const spelledAuthor = this.#authors.get(author);
    if (spelledAuthor === undefined) this.#authors.set(author, { display: quote.author, record });
    else if (spelledAuthor.display !== quote.author) {
      fail(
        'author',
        `${show(quote.author)} is the author ${show(spelledAuthor.display)} of ${this.#where(spelledAuthor.record)} spelled another way (the same folded name)`,
      );
    }

    const workKey = `${author}\u0000${work}`;
    const spelledWork = this.#works.get(workKey);
    if (spelledWork === undefined) this.#works.set(workKey, { display: quote.work, record });
    else if (spelledWork.display !== quote.work) {
      fail(
        'work',
        `${show(quote.work)} is the work ${show(spelledWork.display)} of ${this.#where(spelledWork.record)} spelled another way (the same folded title by the same author)`,
      );
    }

    const creditKey = `${work}\u0000${quote.source}`;
    const credit = this.#credits.get(creditKey);
    if (credit === undefined) this.#credits.set(creditKey, { author, record });
    else if (credit.author !== author) {
      fail(
        'author',
        `the work ${show(quote.work)} (source ${show(quote.source)}) is credited to ${show(quote.author)} here and to another author in ${this.#where(credit.record)}`,
      );
    }

    const first = this.#quotes.claim(quoteDigest(quote.quote, author), record);
    if (first !== 0) {
      fail(
        'quote',
        `the same quote by ${show(quote.author)} as ${this.#where(first)} (the same folded text and author)`,
      );
    }
    return problems;
  }

  #remember(record: number, line: number | undefined): void {
    if (record >= this.#lines.length) {
      let size = this.#lines.length * 2;
      while (size <= record) size *= 2;
      const grown = new Int32Array(size);
      grown.set(this.#lines);
      this.#lines = grown;
    }
    this.#lines[record] = line ?? 0;
  }

  /** `record 3 (line 12)`: how a problem names the earlier record. */
  #where(record: number): string {
    const line = this.#lines[record] ?? 0;
    return line === 0 ? `record ${record}` : `record ${record} (line ${line})`;
  }
}

/**
 * A 53-bit digest of a quote's folded text and folded author, exact as a JavaScript number and
 * never 0: two 32-bit FNV-1a hashes of different offsets, one cut to 21 bits. Cheap beside the
 * folding itself, which a cryptographic hash per quote would double at a million quotes.
 */
function quoteDigest(text: string, foldedAuthor: string): number {
  const key = `${fold(text)}\u0000${foldedAuthor}`;
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  const digest = (a >>> 0) * 0x200000 + ((b >>> 0) >>> 11);
  return digest === 0 ? 1 : digest;
}

/**
 * Digest → first record, in {@link SHARDS} tables of two typed arrays with linear probing: 12
 * bytes per slot, at most half of them used, where a Map of a million numbers holds about 64 MB.
 * Shards grow one at a time, so a growth holds a shard's old arrays beside its new ones, not the
 * whole table's (12 MB more at the peak for a million quotes).
 */
class DigestTable {
  readonly #shards = Array.from({ length: SHARDS }, () => new DigestShard());

  claim(digest: number, record: number): number {
    return (this.#shards[digest % SHARDS] as DigestShard).claim(Math.floor(digest / SHARDS) + 1, record);
  }
}

const SHARDS = 64;

class DigestShard {
  #keys = new Float64Array(1 << 10);
  #records = new Int32Array(1 << 10);
  #size = 0;

  /** Records `record` as the first holder of `digest`; returns the earlier record, or 0 when new. */
  claim(digest: number, record: number): number {
    if ((this.#size + 1) * 2 > this.#keys.length) this.#grow();
    const keys = this.#keys;
    const mask = keys.length - 1;
    for (let slot = digest % (mask + 1); ; slot = (slot + 1) & mask) {
      const key = keys[slot] as number;
      if (key === digest) return this.#records[slot] as number;
      if (key === 0) {
        keys[slot] = digest;
        this.#records[slot] = record;
        this.#size++;
        return 0;
      }
    }
  }

  #grow(): void {
    const keys = this.#keys;
    const records = this.#records;
    this.#keys = new Float64Array(keys.length * 2);
    this.#records = new Int32Array(keys.length * 2);
    this.#size = 0;
    for (let slot = 0; slot < keys.length; slot++) {
      const key = keys[slot] as number;
      if (key !== 0) this.claim(key, records[slot] as number);
    }
  }
}

function show(value: string): string {
  const json = JSON.stringify(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
