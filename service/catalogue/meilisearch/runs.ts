/**
 * Deep pages without the engine's walk. To reach a page the engine walks the sorted matches one
 * distinct sort value at a time: sorted by `id` (or `author_id`, `work_id`), the middle of a
 * million quotes walked half a million values (350 ms); sorted by `category`, it skips whole runs
 * of one category but walks the ids inside the page's run one by one (a page at 80% walked
 * 200,000 of them). This module reads such pages exactly, with a few cheap requests instead:
 *
 * 1. `category`: one facet search counts the matches of each category (the counts must add up
 *    to the total, so they are all of them), which places the page in its run(s); inside a run
 *    the order is by id, read as below.
 * 2. A sort key in the order of a filterable integer (`id`, `author_id`, `work_id`,
 *    `quote_length`, and `publish_date` through `publish_order`): the page's position is
 *    bracketed by values of it, starting from the first and last matches, then with counts of
 *    the matches before an interpolated value, until the engine has at most {@link NARROW_FROM}
 *    matches left to walk; the page is read between the brackets from the nearer one.
 *
 * Runs are told apart by their facet keys, never by the sort attributes, and ordered here on the
 * whole value: a long category (stored in sort chunks) is placed exactly, and one whose key is a
 * digest leaves the page to the plain read.
 *
 * An index that cannot answer these requests (built before `publish_order` and `quote_length`
 * were filterable) is refused them with a 400; the page is then read the plain way too.
 *
 * Every read carries the catalogue version its documents were written by and a total the plan
 * predicts; when either disagrees (a reindex swapped the catalogue mid-plan) the plan is dropped
 * and the caller reads the page the plain way.
 */
import { MeilisearchApiError } from 'meilisearch';
import {
  CatalogueUnavailableError,
  type Direction,
  type ListQuery,
  normaliseSort,
  type QuoteField,
  type SortField,
  type SortKey,
} from '../port.ts';
import {
  buildFilter,
  buildSort,
  decodeFacetKey,
  type FetchRequest,
  type FetchResponse,
  filterExpression,
  type MeiliQuoteDocument,
  publishOrder,
  quoteFilterValue,
  retrievedFields,
  reverseSort,
  type SortChunks,
  withFilter,
} from './request.ts';

/** Sort fields whose runs of equal values can be long, and the filterable key naming a run. */
const RUN_KEYS: Partial<Record<SortField, string>> = { category: 'category_key' };

/** A sort field whose order is that of a filterable integer attribute, so ranges of it can be counted. */
interface CountedKey {
  attribute: string;
  /** The quote field the attribute is computed from. */
  field: QuoteField;
  valueOf(document: MeiliQuoteDocument): number;
}

const ID_KEY: CountedKey = { attribute: 'id', field: 'id', valueOf: (d) => d.id };

const COUNTED_KEYS: Partial<Record<SortField, CountedKey>> = {
  id: ID_KEY,
  author_id: { attribute: 'author_id', field: 'author_id', valueOf: (d) => d.author_id },
  work_id: { attribute: 'work_id', field: 'work_id', valueOf: (d) => d.work_id },
  quote_length: { attribute: 'quote_length', field: 'quote_length', valueOf: (d) => d.quote_length },
  publish_date: {
    attribute: 'publish_order',
    field: 'publish_date',
    valueOf: (d) => publishOrder(d.publish_date),
  },
};

/** Matches of a run the engine may walk to reach a page; a longer walk is narrowed by ids first. */
export const NARROW_FROM = 2_000;

/** Interpolation rounds before reading with whatever walk is left. */
const MAX_ROUNDS = 4;

/** The body of the facet search that counts the matches of each run key. */
export interface RunCountRequest {
  q: '';
  filter?: string;
  facets: string[];
  limit: 1;
  attributesToRetrieve: ['catalogue_version'];
}

/** What the engine answers to a {@link RunCountRequest} (only the parts read here). */
export interface RunCountResponse {
  hits: Array<{ catalogue_version?: unknown }>;
  facetDistribution?: Record<string, Record<string, number>>;
}

export interface RunReader {
  fetch(request: FetchRequest): Promise<FetchResponse<MeiliQuoteDocument>>;
  search(request: RunCountRequest): Promise<RunCountResponse>;
}

/** The run key and directions of a sort that reads in runs: one run field, then only `id`. */
export function runSort(
  query: ListQuery,
): { attribute: string; direction: Direction; idDirection: Direction } | undefined {
  const keys = normaliseSort(query.sort);
  const first = keys[0];
  const attribute = first === undefined ? undefined : RUN_KEYS[first.field];
  if (first === undefined || attribute === undefined) return undefined;
  const rest = keys.slice(1);
  if (rest.length > 1 || (rest.length === 1 && rest[0]?.field !== 'id')) return undefined;
  return { attribute, direction: first.direction, idDirection: rest[0]?.direction ?? 'asc' };
}

/** The request counting the matches of `filter` per value of a run key. */
export function runCountRequest(filter: string | undefined, attribute: string): RunCountRequest {
  const request: RunCountRequest = {
    q: '',
    facets: [attribute],
    limit: 1,
    attributesToRetrieve: ['catalogue_version'],
  };
  if (filter !== undefined) request.filter = filter;
  return request;
}

/** A plan made on documents of another catalogue than the one it started on. */
class Swapped extends Error {}

/**
 * The page of `query` read without the engine's walk, in the sort's order; undefined when the
 * sort cannot be read so, a run key is a digest, or the catalogue changed during the plan.
 */
export async function readPageNarrowed(
  query: ListQuery,
  total: number,
  reader: RunReader,
  narrowFrom = NARROW_FROM,
  chunks: SortChunks = {},
): Promise<MeiliQuoteDocument[] | undefined> {
  try {
    const run = runSort(query);
    if (run !== undefined) return await readPageInRuns(query, run, total, reader, narrowFrom);
    const first = leadingKey(query);
    const key = COUNTED_KEYS[first.field];
    if (key === undefined) return undefined;
    const offset = (query.page - 1) * query.limit;
    const range = new KeyRange(reader, {
      parts: buildFilter(query.filters),
      size: total,
      key,
      direction: first.direction,
      sort: buildSort(query.sort, chunks),
      fields: [...retrievedFields(query.fields), 'catalogue_version'],
      narrowFrom,
    });
    return await range.slice(offset, Math.min(offset + query.limit, total));
  } catch (error) {
    if (error instanceof Swapped) return undefined;
    // A refusal of an attribute the indexer declares comes as an outage (catalogue.ts toPortError):
    // here it only means the index cannot count, and the page is read the plain way.
    const refusal = error instanceof CatalogueUnavailableError ? error.cause : error;
    if (refusal instanceof MeilisearchApiError && refusal.response.status === 400) return undefined;
    throw error;
  }
}

/**
 * Whether {@link readPageNarrowed} reads this page: its sort starts with a key it can count,
 * and the engine would walk at least `narrowFrom` matches to reach the page from either end.
 */
export function narrowable(query: ListQuery, total: number, narrowFrom: number): boolean {
  const first = leadingKey(query);
  const offset = (query.page - 1) * query.limit;
  const walk = Math.min(offset, total - Math.min(offset + query.limit, total));
  return (
    walk >= narrowFrom && (RUN_KEYS[first.field] !== undefined || COUNTED_KEYS[first.field] !== undefined)
  );
}

/** The key the order starts with: without one, the catalogue's order, by ascending id. */
function leadingKey(query: ListQuery): SortKey {
  return normaliseSort(query.sort)[0] ?? { field: 'id', direction: 'asc' };
}

/** `category`: the runs that hold the page, each read as a {@link KeyRange} of ids. */
async function readPageInRuns(
  query: ListQuery,
  sort: NonNullable<ReturnType<typeof runSort>>,
  total: number,
  reader: RunReader,
  narrowFrom: number,
): Promise<MeiliQuoteDocument[] | undefined> {
  const parts = buildFilter(query.filters);
  const counted = await reader.search(runCountRequest(filterExpression(parts), sort.attribute));
  const version = counted.hits[0]?.catalogue_version;
  const distribution = counted.facetDistribution?.[sort.attribute];
  if (typeof version !== 'string' || distribution === undefined) return undefined;
  const runs: Array<{ key: string; value: Buffer; size: number }> = [];
  let sum = 0;
  for (const [key, size] of Object.entries(distribution)) {
    const value = decodeFacetKey(key);
    if (value === undefined) return undefined;
    runs.push({ key, value: Buffer.from(value), size });
    sum += size;
  }
  // Every quote has one value of a run key: counts that do not add up are not all of them.
  if (sum !== total) return undefined;
  // The engine orders strings by their UTF-8 bytes.
  const sign = sort.direction === 'asc' ? 1 : -1;
  runs.sort((x, y) => sign * Buffer.compare(x.value, y.value));

  const offset = (query.page - 1) * query.limit;
  const end = Math.min(offset + query.limit, total);
  const fields = [...retrievedFields(query.fields), 'catalogue_version'];
  const out: MeiliQuoteDocument[] = [];
  let start = 0;
  for (const run of runs) {
    const from = Math.max(offset, start);
    const to = Math.min(end, start + run.size);
    if (from < to) {
      const range = new KeyRange(reader, {
        parts: [...parts, `${sort.attribute} = ${quoteFilterValue(run.key)}`],
        size: run.size,
        key: ID_KEY,
        direction: sort.idDirection,
        sort: [`id:${sort.idDirection}`],
        fields,
        narrowFrom,
        version,
      });
      out.push(...(await range.slice(from - start, to - start)));
    }
    start += run.size;
    if (start >= end) break;
  }
  return out;
}

interface KeyRangeOptions {
  /** The filter of the matches, as {@link buildFilter} parts. */
  parts: readonly string[];
  /** How many matches there are. */
  size: number;
  /** The key the order starts with; ranges of its attribute are counted. */
  key: CountedKey;
  direction: Direction;
  /** The engine's sort of the matches: `attribute` first, then what breaks its ties. */
  sort: readonly string[];
  fields: string[];
  narrowFrom: number;
  /** The catalogue version the plan started on; the first document read sets it otherwise. */
  version?: string;
}

/**
 * Reads slices of the matches of a filter in an order that starts with an integer attribute.
 * Positions are bracketed in "before" values: with `asc`, the matches before `x` are those with
 * `attribute < x`; with `desc`, those with `attribute > x`, written here as `-attribute < -x`.
 */
class KeyRange {
  readonly #reader: RunReader;
  readonly #options: KeyRangeOptions;
  #version: string | undefined;

  constructor(reader: RunReader, options: KeyRangeOptions) {
    this.#reader = reader;
    this.#options = options;
    this.#version = options.version;
  }

  /** The matches at positions [from, to) of the order. */
  async slice(from: number, to: number): Promise<MeiliQuoteDocument[]> {
    const { size, narrowFrom, direction } = this.#options;
    if (Math.min(from, size - to) < narrowFrom) return this.#between(undefined, undefined, from, to, size);
    const sign = direction === 'asc' ? 1 : -1;
    const fields = [...new Set(['id', this.#options.key.field, 'catalogue_version'])];
    const [first, last] = await Promise.all([
      this.#read([], false, 0, 1, size, fields),
      this.#read([], true, 0, 1, size, fields),
    ]);
    // In "before" values: count(before low) = lowCount <= from, count(before high) = highCount >= to.
    let low = sign * this.#value(first[0]);
    let high = sign * this.#value(last[0]) + 1;
    let lowCount = 0;
    let highCount = size;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (Math.min(from - lowCount, highCount - to) < narrowFrom) break;
      const target = (from + to) / 2;
      const x = low + Math.floor(((high - low) * (target - lowCount)) / (highCount - lowCount));
      if (x <= low || x >= high) break;
      const before = await this.#count(this.#before(x));
      if (before <= from) {
        low = x;
        lowCount = before;
      } else if (before >= to) {
        high = x;
        highCount = before;
      } else {
        // The page straddles x: its head is the last matches before x, its tail the first from x.
        const head = await this.#between(low, x, from - lowCount, before - lowCount, before - lowCount);
        const tail = await this.#between(x, high, 0, to - before, highCount - before);
        return [...head, ...tail];
      }
    }
    return this.#between(low, high, from - lowCount, to - lowCount, highCount - lowCount);
  }

  /** The clause of the matches before `x` (in "before" values). */
  #before(x: number): string {
    const { key, direction } = this.#options;
    return direction === 'asc' ? `${key.attribute} < ${x}` : `${key.attribute} > ${-x}`;
  }

  /**
   * Positions [from, to) among the `size` matches from `low` (included) to `high` (excluded),
   * in "before" values (undefined: unbounded), read from the nearer end.
   */
  async #between(
    low: number | undefined,
    high: number | undefined,
    from: number,
    to: number,
    size: number,
  ): Promise<MeiliQuoteDocument[]> {
    const clauses: string[] = [];
    if (low !== undefined) clauses.push(`NOT ${this.#before(low)}`);
    if (high !== undefined) clauses.push(this.#before(high));
    if (from <= size - to) return this.#read(clauses, false, from, to - from, size);
    return (await this.#read(clauses, true, size - to, to - from, size)).reverse();
  }

  #value(document: MeiliQuoteDocument | undefined): number {
    const value = document === undefined ? undefined : this.#options.key.valueOf(document);
    if (value === undefined || !Number.isSafeInteger(value)) throw new Swapped();
    return value;
  }

  /** The number of matches also matching `clause`. */
  async #count(clause: string): Promise<number> {
    const response = await this.#reader.fetch(
      withFilter(filterExpression([...this.#options.parts, clause]), {
        offset: 0,
        limit: 1,
        fields: ['catalogue_version'],
      }),
    );
    this.#check(response.results);
    return response.total;
  }

  /**
   * `limit` matches within `clauses` from `offset`, in the order or (`reversed`) its exact
   * reverse; `expected` of them in all, or the catalogue changed.
   */
  async #read(
    clauses: readonly string[],
    reversed: boolean,
    offset: number,
    limit: number,
    expected: number,
    fields = this.#options.fields,
  ): Promise<MeiliQuoteDocument[]> {
    const sort = reversed ? reverseSort(this.#options.sort) : [...this.#options.sort];
    const response = await this.#reader.fetch(
      withFilter(filterExpression([...this.#options.parts, ...clauses]), { sort, offset, limit, fields }),
    );
    if (response.total !== expected || response.results.length !== limit) throw new Swapped();
    this.#check(response.results);
    return response.results;
  }

  #check(results: readonly MeiliQuoteDocument[]): void {
    for (const hit of results) {
      this.#version ??= hit.catalogue_version;
      if (hit.catalogue_version !== this.#version) throw new Swapped();
    }
  }
}
