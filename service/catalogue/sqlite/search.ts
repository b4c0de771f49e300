/**
 * Full-text search (`q`) on the embedded catalogue: the FTS5 table of its file (sqlite/schema.ts)
 * finds the quotes holding the query's words, and the columns in memory (sqlite/query.ts) apply
 * the other filters, order and page them. The rules themselves are in search.ts.
 *
 * Queries carry only {@link searchToken}s, each in double quotes (a token is ASCII letters, so
 * nothing needs escaping), and the last one with `*`: FTS5 then matches tokens beginning with
 * it, which are exactly the words beginning with the last word of the query.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { SortKey } from '../port.ts';
import { searchToken } from '../search.ts';
import type { CatalogueColumns, Selection, Strategies } from './query.ts';
import { SEARCH_TABLE } from './schema.ts';

/** Searches one catalogue file. */
export class SqliteSearch {
  readonly #columns: CatalogueColumns;
  readonly #match: StatementSync;

  constructor(db: DatabaseSync, columns: CatalogueColumns) {
    this.#columns = columns;
    // One string of ids rather than a row per match: a common word matches most of a catalogue.
    this.#match = db.prepare(
      `SELECT group_concat(rowid) AS ids FROM (SELECT rowid FROM ${SEARCH_TABLE} WHERE ${SEARCH_TABLE} MATCH ? ORDER BY rowid)`,
    );
  }

  /** Ords (ascending) of the quotes of `selection` that match `words`. */
  matches(words: readonly string[], selection: Selection): Int32Array {
    return this.#run(expression(words, 'any'), selection);
  }

  /** One page of the matches in `sort` order (ending with the id key), and their number. */
  page(
    words: readonly string[],
    selection: Selection,
    sort: readonly SortKey[],
    offset: number,
    limit: number,
    strategies: Strategies,
  ): { ords: number[]; total: number } {
    const all = this.matches(words, selection);
    return { ords: this.#columns.pageOfOrds(all, sort, offset, limit, strategies), total: all.length };
  }

  /** One page of the matches in relevance order (search.ts), and their number. */
  rankedPage(
    words: readonly string[],
    selection: Selection,
    offset: number,
    limit: number,
  ): { ords: number[]; total: number } {
    const all = this.matches(words, selection);
    const ords: number[] = [];
    if (offset >= all.length) return { ords, total: all.length };
    const inText = this.#run(expression(words, 'text'), selection);
    const phrase = words.length === 1 ? inText : this.#run(expression(words, 'phrase'), selection);
    const groups = [phrase, difference(inText, phrase), difference(all, inText)];
    let skip = offset;
    for (const group of groups) {
      if (ords.length === limit) break;
      if (skip >= group.length) {
        skip -= group.length;
        continue;
      }
      const take = Math.min(group.length - skip, limit - ords.length);
      for (let i = skip; i < skip + take; i++) ords.push(group[i] as number);
      skip = 0;
    }
    return { ords, total: all.length };
  }

  #run(match: string, selection: Selection): Int32Array {
    const row = this.#match.get(match) as { ids: string | null } | undefined;
    const text = row?.ids ?? null;
    if (text === null || text === '') return new Int32Array(0);
    const ids = parseIds(text);
    return this.#columns.within(this.#columns.ordsOfIds(ids), selection);
  }
}

/**
 * The FTS5 query of a search: every token in any column (`any`), every token in the text
 * (`text`), or the tokens side by side and in order in the text (`phrase`).
 */
export function expression(words: readonly string[], scope: 'any' | 'text' | 'phrase'): string {
  const tokens = words.map(searchToken);
  const last = tokens.length - 1;
  if (scope === 'phrase') return `text : "${tokens.join(' ')}"*`;
  const terms = tokens.map((t, i) => (i === last ? `"${t}"*` : `"${t}"`)).join(' AND ');
  return scope === 'text' ? `text : (${terms})` : terms;
}

/** Comma-separated decimal ids, as group_concat writes them, into numbers. */
function parseIds(text: string): Float64Array {
  let count = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 44) count++;
  const out = new Float64Array(count);
  let n = 0;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44) {
      out[n++] = value;
      value = 0;
    } else {
      value = value * 10 + (c - 48);
    }
  }
  out[n] = value;
  return out;
}

/** The values of `a` not in `b`; both ascending, `b` a subset of `a`. */
function difference(a: Int32Array, b: Int32Array): Int32Array {
  if (b.length === 0) return a;
  const out = new Int32Array(a.length - b.length);
  let j = 0;
  let n = 0;
  for (const value of a) {
    while (j < b.length && (b[j] as number) < value) j++;
    if (j < b.length && b[j] === value) continue;
    out[n++] = value;
  }
  return out.subarray(0, n);
}
