/**
 * The Meilisearch adapter of the catalogue port, read side. Every call without `q` is one or two
 * reads of the live index through the documents routes (`POST /documents/fetch`, `GET
 * /documents/{id}`), the engine's cheapest exact answer to a listing without full-text search;
 * the requests themselves are built by `meilisearch/request.ts`. A call with `q` searches
 * (`/search`, `/multi-search`; meilisearch/search.ts). The service's key holds `search` and
 * `documents.get` on the live index, nothing that writes.
 *
 * Availability: the client's per-request timeout bounds every call (and aborts its request),
 * and engine failures become {@link CatalogueUnavailableError} (HTTP 503): unreachable, timed
 * out, answering 5xx or non-JSON, refusing the key, or holding no index yet. Any other refusal
 * is a request this adapter built wrongly, a bug, and is rethrown as is (HTTP 500). After a
 * failure, {@link CatalogueIndex.recentFailure} names it (so `/ready` answers 503 at once) until
 * a read succeeds; a search the engine shed for load is no such failure.
 *
 * Live reload comes for free: the indexer swaps a finished index into the live name, and the
 * next read sees it. A call made of two reads checks that both saw the same number of matches,
 * and reads again otherwise, so it never mixes two catalogues.
 */
import { randomInt } from 'node:crypto';
import { MeilisearchApiError, MeilisearchRequestError, MeilisearchRequestTimeOutError } from 'meilisearch';
import type { Directory } from '../authors.ts';
import { apartFromRequest, readDeadline } from '../budget.ts';
import {
  type CatalogueIndex,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  compareCodePoints,
  FACET_FIELDS,
  type FacetField,
  type FacetQuery,
  type FacetResult,
  type Filters,
  fold,
  type JsonEnvelope,
  type ListQuery,
  type ListResult,
  MAX_FACET_LIMIT,
  type QuoteField,
  type QuoteProjection,
} from '../port.ts';
import { distinctDrawer, drawDistinct } from '../sample.ts';
import { AUTHORS_SETTINGS, MeiliDirectory, WORKS_SETTINGS } from './authors.ts';
import { type EngineHttp, engineHttp, parseAnswer } from './http.ts';
import { isRawDocument, type RawPage, rawPage, rawVersionedPage } from './json.ts';
import {
  buildFilter,
  CHUNKED_FIELDS,
  countRequest,
  decodeFacetKey,
  displayRequest,
  displayValue,
  ENGINE_ORDER_ID,
  FACET_ATTRIBUTES,
  type FacetSearchResponse,
  type FetchRequest,
  type FetchResponse,
  facetSearchRequest,
  filterExpression,
  getRequest,
  idEndRequest,
  idRangeRequest,
  inEngineOrder,
  infoRequest,
  isCount,
  MAX_DEEP_READS,
  MEILI_SETTINGS,
  type MeiliQuoteDocument,
  pageRequest,
  pickRequest,
  projectHit,
  rangeFilter,
  readSortChunks,
  retrievedFields,
  SAMPLE_SCAN,
  SHALLOW_OFFSET,
  type SortChunks,
  sampleByIdsRequest,
  sampleCandidatesRequest,
  sampleRunRequests,
  sampleScanRequest,
} from './request.ts';
import {
  NARROW_FROM,
  narrowable,
  type RunCountRequest,
  type RunCountResponse,
  readPageNarrowed,
} from './runs.ts';
import {
  cutShort,
  rankedSearches,
  restSearch,
  type SearchRequest,
  type SearchResponse,
  searchCount,
} from './search.ts';

/** The ids of one catalogue: the first, the last, how many, and whether every integer between is one. */
interface IdSpan {
  version: string;
  total: number;
  first: number;
  last: number;
  contiguous: boolean;
}

/** How long {@link CatalogueIndex.info} answers from memory: it is read on every request (ETags). */
export const INFO_TTL_MS = 1_000;
/** A facet key and its count, as a distribution ranks them. */
interface RankedKey {
  key: string;
  count: number;
}

/** One facet's keys in the port's order (the first MAX_FACET_LIMIT), and the matches' total. */
interface RankedFacet {
  total: number;
  keys: RankedKey[];
}

/** Ranked facet distributions kept in memory, oldest dropped first. */
const MAX_RANKED_FACETS = 1_000;

/** Display values of facet keys kept in memory before starting afresh. */
const MAX_FACET_DISPLAY_ENTRIES = 50_000;
/** Reads of a two-read call (`list`, `random`) before giving up while the catalogue keeps changing. */
const ATTEMPTS = 3;
/**
 * How long a count of matches is reused to plan deep pages and random draws. A remembered count
 * only saves a round trip: the read it plans answers the exact total of the same filter, and a
 * plan made on a count that no longer holds is made again on that total, so an answer never
 * rests on a remembered count alone.
 */
export const COUNT_TTL_MS = 1_000;
/** Filters whose counts are remembered at once; past this many the memory starts afresh. */
const MAX_REMEMBERED_COUNTS = 10_000;
/** Candidates `randomSample` may expect to draw by rejection; sparser matches are read by offset. */
const MAX_SAMPLE_CANDIDATES = 2_000;
/** Most candidate ids one rejection round asks about. */
const MAX_SAMPLE_BATCH = 1_000;
/** Rejection rounds before reading by offset instead. */
const SAMPLE_ROUNDS = 3;
/** Reads of one `randomSample` call in flight at once, when it reads offset by offset. */
const SAMPLE_READS_AT_ONCE = 4;
/** Seconds a client is told to wait when the engine or the service sheds load. */
export const ENGINE_BUSY_RETRY_AFTER_S = 1;

export interface MeiliCatalogueOptions {
  /** Engine address, e.g. `http://127.0.0.1:7700`. */
  host: string;
  /** A key allowed to search the index (a search-only key in production). */
  apiKey: string | undefined;
  /** Live index uid. */
  index: string;
  /** Upper bound of one engine request; past it the call fails with CatalogueUnavailableError. */
  timeoutMs: number;
  /** Pages starting before this offset are read forward without a count first ({@link SHALLOW_OFFSET}). */
  shallowOffset?: number;
  /** Matches up to this many are sampled from one read of their ids (default SAMPLE_SCAN). */
  sampleScan?: number;
  /** Deep pages read at once, default {@link MAX_DEEP_READS}; more wait for a slot, then answer 503. */
  maxDeepReads?: number;
  /** Requests the engine works on at once (request.ts {@link DEFAULT_ENGINE_CONNECTIONS}); more wait in order. */
  connections?: number;
  /** Draw several random quotes among many matches by rejection of candidate ids (default true). */
  sampleByIds?: boolean;
  /** Read deep unfiltered pages in id order as ranges of ids when the ids have no gap (default true). */
  idRanges?: boolean;
  /** Count the unfiltered facets of each new catalogue as soon as it is served, before any request asks. */
  warmFacets?: boolean;
  /** Matches of a run of equal sort values walked before a page is narrowed by ids ({@link NARROW_FROM}). */
  narrowFrom?: number;
  logger?: CatalogueLogger;
}

/**
 * Opens the live Meilisearch index for reading. Never touches the network itself: an engine
 * that is down (or not yet up) surfaces as {@link CatalogueUnavailableError} from each call,
 * and the same object serves as soon as the engine answers.
 */
export function openMeiliCatalogue(options: MeiliCatalogueOptions): CatalogueIndex {
  return new MeiliCatalogue(options);
}

class MeiliCatalogue implements CatalogueIndex {
  readonly kind = 'meilisearch';
  readonly #options: MeiliCatalogueOptions;
  readonly #http: EngineHttp;
  readonly #fetchPath: string;
  readonly #searchPath: string;
  /** Display values of facet keys, per catalogue version (the port's rule never changes them within one). */
  readonly #displays = new Map<string, Promise<string>>();
  /**
   * Facet distributions already ranked, and totals, per catalogue version and filter: a facet
   * request asks the engine to count every value of its matches, the same work whatever the
   * `limit` or the other facets asked beside, and the answer holds until the catalogue changes.
   */
  readonly #rankedFacets = new Map<string, Promise<RankedFacet>>();
  #info: { value: CatalogueInfo; at: number } | undefined;
  #pendingInfo: Promise<CatalogueInfo> | undefined;
  #deepReads = 0;
  /** Recent exact counts by filter expression ('' for none), with when they were read. */
  readonly #counts = new Map<string, { total: number; at: number }>();
  /** Deep pages waiting for a read to end, oldest first; each is handed the slot a read frees. */
  readonly #deepWaiting: Array<(admitted: boolean) => void> = [];
  /**
   * The version of the catalogue last found marked as held in id order by the engine
   * ({@link ENGINE_ORDER_ID}): its forward reads leave out the `id:asc` that ends their sort.
   */
  #idOrdered: string | undefined;
  /** The sort chunks the first document of the catalogue last read records ({@link SortChunks}). */
  #sortChunks: { version: string; chunks: SortChunks } | undefined;
  /** The catalogue's id span, per catalogue version ({@link MeiliCatalogue.#idSpan}). */
  #span: { version: string; span: Promise<IdSpan | undefined> } | undefined;
  /** The last engine failure, until a read succeeds again. */
  #failure: CatalogueUnavailableError | undefined;

  constructor(options: MeiliCatalogueOptions) {
    this.#options = options;
    // Every request is bounded by its call's deadline (#deadline), which MEILI_TIMEOUT_MS sets.
    this.#http = engineHttp(options.host, options.apiKey, options.connections);
    this.#fetchPath = `indexes/${encodeURIComponent(options.index)}/documents/fetch`;
    this.#searchPath = `indexes/${encodeURIComponent(options.index)}/search`;
  }

  recentFailure(): CatalogueUnavailableError | undefined {
    return this.#failure;
  }

  #directory: MeiliDirectory | undefined;

  /** Authors and works, from the indexes the indexer swaps in with the quotes (meilisearch/authors.ts). */
  directory(): Directory {
    this.#directory ??= new MeiliDirectory(
      {
        sortChunks: () => this.#servedChunks(),
        fetch: <T>(index: string, request: FetchRequest) => {
          const deadline = this.#deadline();
          return this.#call(
            async () =>
              documentsAnswer(
                await this.#http.post<FetchResponse<T>>({
                  path: `indexes/${encodeURIComponent(index)}/documents/fetch`,
                  body: request,
                  deadline,
                }),
              ),
            index,
          );
        },
        search: (request: object) => {
          const deadline = this.#deadline();
          return this.#call(async () =>
            searchAnswer(
              await this.#http.post<{
                hits: { catalogue_version?: string }[];
                facetDistribution?: Record<string, Record<string, number>>;
              }>({ path: this.#searchPath, body: request, deadline }),
            ),
          );
        },
      },
      this.#options.index,
    );
    return this.#directory;
  }

  info(): Promise<CatalogueInfo> {
    const cached = this.#info;
    // After a failure the answer in memory says nothing of the engine now: read it afresh.
    if (cached !== undefined && this.#failure === undefined && performance.now() - cached.at < INFO_TTL_MS) {
      return Promise.resolve(cached.value);
    }
    return this.#refreshInfo();
  }

  #refreshInfo(): Promise<CatalogueInfo> {
    // Concurrent callers share one request; a failure is not cached, so the next call retries.
    this.#pendingInfo ??= this.#loadInfo().finally(() => {
      this.#pendingInfo = undefined;
    });
    return this.#pendingInfo;
  }

  async #loadInfo(): Promise<CatalogueInfo> {
    const response = await this.#fetch(infoRequest(), this.#deadline());
    const hit = response.results[0];
    let version: string;
    if (hit === undefined) {
      // The indexer never builds an empty catalogue; an empty index answers the same to every
      // request whatever its origin, so one version for all of them is exact.
      version = 'empty';
    } else if (typeof hit.catalogue_version === 'string' && hit.catalogue_version !== '') {
      version = hit.catalogue_version;
    } else {
      throw new CatalogueUnavailableError(
        `Meilisearch index '${this.#options.index}' was not built by the indexer (its documents have no catalogue version)`,
      );
    }
    const info = { version, count: response.total };
    this.#idOrdered = hit?.catalogue_order === ENGINE_ORDER_ID ? version : undefined;
    this.#sortChunks = { version, chunks: readSortChunks(hit?.catalogue_sort_chunks) };
    const changed = this.#info?.value.version !== version;
    if (changed) {
      this.#options.logger?.info({ backend: this.kind, ...info }, 'serving catalogue');
    }
    this.#info = { value: info, at: performance.now() };
    if (changed && this.#options.warmFacets === true) this.#warmFacets();
    return info;
  }

  /**
   * Counts the unfiltered facets of a catalogue as soon as it is served: the costliest facet
   * request (every value of every quote), the same for all clients until the next catalogue, so
   * that the first of them does not wait for it. Requests arriving meanwhile share it.
   */
  #warmFacets(): void {
    // Not within the time of the request that found the new catalogue: it serves everyone.
    apartFromRequest(() =>
      this.facets({ filters: {}, facets: [...FACET_FIELDS], limit: MAX_FACET_LIMIT }),
    ).catch((error: unknown) => {
      this.#options.logger?.warn(
        { backend: this.kind, err: error },
        'counting the facets of the new catalogue failed; the first facet request counts them',
      );
    });
  }

  list(query: ListQuery): Promise<ListResult> {
    return withFilterFields(query.filters, this.#list(query));
  }

  /**
   * `list` as the bytes of the answer when the page is read forward in one request (the pages
   * people open): the engine's `results` array is the page as the route would write it, and is
   * passed through (meilisearch/json.ts). Any other page, or an answer of another shape, is
   * returned as `list` returns it.
   */
  listJson(query: ListQuery, envelope: JsonEnvelope): Promise<Buffer | ListResult> {
    return withFilterFields(query.filters, this.#listJson(query, envelope));
  }

  async #listJson(query: ListQuery, envelope: JsonEnvelope): Promise<Buffer | ListResult> {
    // One deadline for the whole call: a raw read given up on leaves `list` only what remains.
    const deadline = this.#deadline();
    // A ranked page is searched; any other, `q` or not, is a documents read like this one.
    if (query.ranked === true) return this.#list(query, deadline);
    let page: RawPage | ListResult;
    if (this.#shallow(query)) {
      const plan = pageRequest(query, undefined, await this.#chunksOf(query));
      if ('pastEnd' in plan) throw new Error('a page read forward cannot be past the end');
      const read = await this.#fetchPage(plan.request, retrievedFields(query.fields), deadline);
      if (!('items' in read)) {
        return { items: read.results.map((hit) => projectHit(hit, query.fields)), total: read.total };
      }
      page = read;
    } else {
      page =
        (this.#byIdRanges(query) ? await this.#rawPageById(query, deadline) : undefined) ??
        (await this.#list(query, deadline));
      if (!Buffer.isBuffer(page.items)) return page as ListResult;
    }
    const { items, total, count } = page as RawPage;
    const tail = envelope.tail(total, count);
    const out = Buffer.allocUnsafeSlow(
      Buffer.byteLength(envelope.head) + items.length + Buffer.byteLength(tail),
    );
    let at = out.write(envelope.head);
    at += items.copy(out, at);
    out.write(tail, at);
    return out;
  }

  /** Whether a deep page is read as a range of ids when the catalogue's ids have no gap ({@link #pageById}). */
  #byIdRanges(query: ListQuery): boolean {
    return (
      this.#options.idRanges !== false &&
      buildFilter(query.filters).length === 0 &&
      (query.sort[0]?.field ?? 'id') === 'id'
    );
  }

  /**
   * {@link #pageById} as the bytes of its quotes, the version each document carries taken out
   * (meilisearch/json.ts); undefined where #pageById would be, or for an answer of another shape,
   * which `list` then reads the plain way.
   */
  async #rawPageById(query: ListQuery, deadline: number): Promise<RawPage | undefined> {
    const range = await this.#idRange(query, deadline);
    if (range === undefined) return undefined;
    const { span, request } = range;
    const fields = retrievedFields(query.fields);
    // Each document's version is checked against the span's: read in the engine's order when
    // the span's catalogue is the one marked as held in id order.
    const ordered = this.#inEngineOrder(request);
    const body = ordered?.version === span.version ? ordered.request : request;
    const page = await this.#call(async () =>
      rawVersionedPage(
        await this.#http.postBytes({ path: this.#fetchPath, body, deadline }),
        fields,
        span.version,
      ),
    );
    // Every id of the range, each from the catalogue the span was read in, or it is read again.
    if (page === undefined || page.total !== request.limit || page.count !== request.limit) return undefined;
    return { items: page.items, count: page.count, total: span.total };
  }

  /**
   * The sort chunks of the catalogue served, for a sort by a text key (no other needs them). Read
   * with the version the request's ETag was computed from: a catalogue swapped in since is sorted
   * by the chunks of the one before until the next read of its version (at most INFO_TTL_MS), and
   * one built by an earlier release refuses chunk attributes with a 503 that makes it read again.
   */
  async #chunksOf(query: ListQuery): Promise<SortChunks> {
    const text = query.sort.some((key) => (CHUNKED_FIELDS as readonly string[]).includes(key.field));
    return text ? this.#servedChunks() : {};
  }

  async #servedChunks(): Promise<SortChunks> {
    const { version } = await this.info();
    const known = this.#sortChunks;
    return known?.version === version ? known.chunks : {};
  }

  /** A page read forward at once, its total with it ({@link SHALLOW_OFFSET}). */
  #shallow(query: ListQuery): boolean {
    return (query.page - 1) * query.limit < (this.#options.shallowOffset ?? SHALLOW_OFFSET);
  }

  async #list(query: ListQuery, deadline = this.#deadline()): Promise<ListResult> {
    if (query.ranked === true) return this.#searchList(query, deadline);
    const toItems = (results: readonly object[]) => results.map((hit) => projectHit(hit, query.fields));
    const chunks = await this.#chunksOf(query);
    if (this.#shallow(query)) {
      const plan = pageRequest(query, undefined, chunks);
      if ('pastEnd' in plan) throw new Error('a page read forward cannot be past the end');
      const response = await this.#fetch(plan.request, deadline);
      return { items: toItems(response.results), total: response.total };
    }
    if (this.#byIdRanges(query)) {
      const page = await this.#pageById(query, deadline);
      if (page !== undefined) return { items: toItems(page.results), total: page.total };
    }
    const filter = filterExpression(buildFilter(query.filters));
    let { total, remembered } = await this.#count(filter, deadline);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const plan = pageRequest(query, total, chunks);
      if ('pastEnd' in plan) {
        // Nothing is read to confirm a page past the end: confirm a remembered count first.
        if (!remembered) return { items: [], total };
        ({ total, remembered } = await this.#count(filter, deadline, true));
        continue;
      }
      if (!(await this.#admitDeep(deadline))) {
        throw new CatalogueUnavailableError('too many deep pages are being read at once', {
          retryAfterSeconds: ENGINE_BUSY_RETRY_AFTER_S,
        });
      }
      let response: FetchResponse<MeiliQuoteDocument>;
      try {
        if (narrowable(query, total, this.#options.narrowFrom ?? NARROW_FROM)) {
          const narrowed = await readPageNarrowed(
            query,
            total,
            this.#runReader(deadline),
            this.#options.narrowFrom,
            chunks,
          );
          if (narrowed !== undefined) return { items: toItems(narrowed), total };
        }
        response = await this.#fetch(plan.request, deadline);
      } finally {
        this.#releaseDeep();
      }
      this.#remember(filter, response.total);
      if (response.total === total) {
        const items = toItems(response.results);
        return { items: plan.reversed ? items.reverse() : items, total };
      }
      // The catalogue was replaced between the count and the page: plan again on the new one.
      total = response.total;
      remembered = false;
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while a page was read');
  }

  async get(id: number, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const document = await this.#getDocument(id, fields, false);
    return document === null ? null : projectHit(document, fields);
  }

  /**
   * `get` as the bytes of the answer: the engine's document is the quote as the route would
   * write it, and is passed through (meilisearch/json.ts); any other answer comes as `get` gives it.
   */
  async getJson(id: number, fields: readonly QuoteField[] | null): Promise<Buffer | QuoteProjection | null> {
    const document = await this.#getDocument(id, fields, true);
    if (document === null || Buffer.isBuffer(document)) return document;
    return projectHit(document, fields);
  }

  /**
   * The document of `id` with `fields`, or null when no quote has it; with `raw`, as the bytes
   * of a buffer of its own when the engine wrote it as the quote's answer.
   */
  async #getDocument(
    id: number,
    fields: readonly QuoteField[] | null,
    raw: boolean,
  ): Promise<Buffer | object | null> {
    const { path, params } = getRequest(this.#options.index, id, fields);
    try {
      const deadline = this.#deadline();
      return await this.#call(async () => {
        const body = await this.#http.getBytes({ path, params, deadline });
        if (raw && isRawDocument(body, retrievedFields(fields))) {
          // Kept by the answer cache: not a view of the connection's read buffer.
          const own = Buffer.allocUnsafeSlow(body.length);
          body.copy(own);
          return own;
        }
        return documentAnswer(parseAnswer<object>(body));
      });
    } catch (error) {
      if (error instanceof MeilisearchApiError && error.cause?.code === 'document_not_found') {
        this.#failure = undefined;
        return null;
      }
      throw error;
    }
  }

  random(filters: Filters, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    return withFilterFields(filters, this.#random(filters, fields));
  }

  async #random(filters: Filters, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const deadline = this.#deadline();
    if (buildFilter(filters).length === 0) {
      const drawn = await this.#randomById(fields, deadline);
      if (drawn !== undefined) return drawn;
    }
    const filter = filterExpression(buildFilter(filters));
    let { total, remembered } = await this.#count(filter, deadline);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (total === 0) {
        // "Nothing matches" reads nothing that would confirm it: confirm a remembered count first.
        if (!remembered) return null;
        ({ total, remembered } = await this.#count(filter, deadline, true));
        continue;
      }
      const response = await this.#fetch(pickRequest(filter, randomInt(total), fields), deadline);
      this.#remember(filter, response.total);
      const hit = response.results[0];
      if (hit !== undefined && response.total === total) return projectHit(hit, fields);
      // The catalogue was replaced between the count and the pick: draw again in the new one.
      total = response.total;
      remembered = false;
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while a random quote was drawn');
  }

  /**
   * One search gives the exact total and every key of every requested facet with its count
   * (the index lists them all: `faceting.maxValuesPerFacet`); the service ranks them. Keys are
   * folded values (decoded, or read from a document for a digest key), and the values listed get
   * their display spelling from the lowest-id quote holding them, remembered per catalogue.
   */
  firstMatch(
    filters: Filters,
    ids: readonly number[],
    fields: readonly QuoteField[] | null,
  ): Promise<QuoteProjection | null> {
    return withFilterFields(filters, this.#firstMatch(filters, ids, fields));
  }

  /**
   * Which of `ids` match, in one read of their ids only (the filter evaluated once), then the
   * first of them in `ids` order read by its key, from the same catalogue.
   */
  async #firstMatch(
    filters: Filters,
    ids: readonly number[],
    fields: readonly QuoteField[] | null,
  ): Promise<QuoteProjection | null> {
    if (ids.length === 0) return null;
    const deadline = this.#deadline();
    const filter = filterExpression(buildFilter(filters));
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const response = await this.#fetch(
        sampleCandidatesRequest(filter, [...new Set(ids)], ['id', 'catalogue_version']),
        deadline,
      );
      const matching = new Map(response.results.map((hit) => [hit.id, hit.catalogue_version]));
      const id = ids.find((candidate) => matching.has(candidate));
      if (id === undefined) return null;
      const hit = await this.#document(id, [...retrievedFields(fields), 'catalogue_version'], deadline);
      // Read from the catalogue that matched it, or the catalogue was replaced in between.
      if (hit !== null && hit.catalogue_version === matching.get(id)) return projectHit(hit, fields);
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while a match was read');
  }

  facets(query: FacetQuery): Promise<FacetResult> {
    return withFilterFields(query.filters, this.#facets(query));
  }

  async #facets(query: FacetQuery): Promise<FacetResult> {
    const deadline = this.#deadline();
    const filter = filterExpression(buildFilter(query.filters));
    const { version } = await this.info();
    const memo = (field: FacetField) => JSON.stringify([version, filter ?? null, field]);
    const missing = query.facets.filter((field) => !this.#rankedFacets.has(memo(field)));
    if (missing.length > 0) {
      // One search for every facet not counted yet; requests arriving meanwhile share it.
      const search = this.#facetSearch(facetSearchRequest(filter, missing), deadline);
      for (const field of missing) {
        const ranked: Promise<RankedFacet> = search.then(async (response) => ({
          total: response.totalHits,
          keys: await this.#rank(
            field,
            response.facetDistribution?.[FACET_ATTRIBUTES[field]] ?? {},
            response.totalHits,
            deadline,
          ),
        }));
        // A failure is not kept: the next request asks the engine again.
        ranked.catch(() => {
          if (this.#rankedFacets.get(memo(field)) === ranked) this.#rankedFacets.delete(memo(field));
        });
        if (this.#rankedFacets.size >= MAX_RANKED_FACETS) {
          this.#rankedFacets.delete(this.#rankedFacets.keys().next().value as string);
        }
        this.#rankedFacets.set(memo(field), ranked);
      }
    }
    const counted = await Promise.all(
      query.facets.map((field) => this.#rankedFacets.get(memo(field)) as Promise<RankedFacet>),
    );
    const facets: FacetResult['facets'] = {};
    for (const [i, field] of query.facets.entries()) {
      const keys = counted[i]?.keys ?? [];
      facets[field] = await Promise.all(
        keys.slice(0, query.limit).map(async ({ key, count }) => ({
          value: await this.#facetDisplay(field, key, deadline),
          count,
        })),
      );
    }
    return { total: counted[0]?.total ?? 0, facets };
  }

  /** Every key of a facet distribution with its count, in the port's order. */
  async #rank(
    field: FacetField,
    distribution: Record<string, number>,
    total: number,
    deadline: number,
  ): Promise<RankedKey[]> {
    const entries = Object.entries(distribution).map(([key, count]) => ({
      key,
      count,
      folded: decodeFacetKey(key),
    }));
    if (ONE_VALUE_PER_QUOTE.has(field) && entries.reduce((sum, e) => sum + e.count, 0) !== total) {
      // One value per quote: the counts add up to the total unless the engine cut the list.
      throw new CatalogueUnavailableError(
        `Meilisearch index '${this.#options.index}' lists only some facet values: rebuild it with the indexer (it sets faceting.maxValuesPerFacet)`,
      );
    }
    for (const entry of entries) {
      entry.folded ??= fold(await this.#facetDisplay(field, entry.key, deadline));
    }
    entries.sort((a, b) => b.count - a.count || compareCodePoints(a.folded as string, b.folded as string));
    // A request lists at most MAX_FACET_LIMIT of them: the rest need not be kept.
    return entries.slice(0, MAX_FACET_LIMIT).map(({ key, count }) => ({ key, count }));
  }

  async #facetDisplay(field: FacetField, key: string, deadline: number): Promise<string> {
    const { version } = await this.info();
    const memo = `${version}\u0000${field}\u0000${key}`;
    const known = this.#displays.get(memo);
    if (known !== undefined) return known;
    // Requests listing the same value meanwhile share this lookup; a failed one is not kept.
    const forget = () => {
      if (this.#displays.get(memo) === lookup) this.#displays.delete(memo);
    };
    const lookup = this.#lookUpDisplay(field, key, deadline).then(({ display, seen }) => {
      // Read from the next catalogue already: right for this request, not the version's to keep.
      if (seen !== version) forget();
      return display;
    });
    if (this.#displays.size >= MAX_FACET_DISPLAY_ENTRIES) this.#displays.clear();
    this.#displays.set(memo, lookup);
    lookup.catch(forget);
    return lookup;
  }

  async #lookUpDisplay(
    field: FacetField,
    key: string,
    deadline: number,
  ): Promise<{ display: string; seen: unknown }> {
    const hit = (await this.#fetch(displayRequest(field, key), deadline)).results[0] as
      | Record<string, unknown>
      | undefined;
    const display = hit === undefined ? undefined : displayValue(field, key, hit);
    if (hit === undefined || display === undefined) {
      // The facet counts came from a catalogue the lookup no longer sees: swapped in between.
      throw new CatalogueUnavailableError('the catalogue changed while facet values were read; retry');
    }
    return { display, seen: hit.catalogue_version };
  }

  #facetSearch(request: object, deadline: number): Promise<FacetSearchResponse> {
    return this.#call(async () => {
      const answer = await this.#http.post<FacetSearchResponse>({
        path: this.#searchPath,
        body: request,
        deadline,
      });
      if (!isObject(answer) || !isCount(answer.totalHits)) throw malformedAnswer('a facet search');
      return answer;
    });
  }

  async close(): Promise<void> {
    this.#info = undefined;
    this.#counts.clear();
    // Its connections; a call made after this opens new ones.
    await this.#http.close();
  }

  /**
   * The exact number of matches of `filter`: remembered for {@link COUNT_TTL_MS} (`remembered`
   * says the caller must confirm it with a read), or counted by the engine now (`fresh`).
   */
  async #count(
    filter: string | undefined,
    deadline: number,
    fresh = false,
  ): Promise<{ total: number; remembered: boolean }> {
    const known = this.#counts.get(filter ?? '');
    if (!fresh && known !== undefined && performance.now() - known.at < COUNT_TTL_MS) {
      return { total: known.total, remembered: true };
    }
    const { total } = await this.#fetch(countRequest(filter), deadline);
    this.#remember(filter, total);
    return { total, remembered: false };
  }

  #remember(filter: string | undefined, total: number): void {
    if (this.#counts.size >= MAX_REMEMBERED_COUNTS) this.#counts.clear();
    this.#counts.set(filter ?? '', { total, at: performance.now() });
  }

  /** `list` in relevance order (meilisearch/search.ts): two searches in one request, perhaps a third. */
  async #searchList(query: ListQuery, deadline: number): Promise<ListResult> {
    const toItems = (response: SearchResponse) => {
      if (cutShort(response)) throw cutShortError();
      return response.hits.map((hit) => projectHit(hit, query.fields));
    };
    const offset = (query.page - 1) * query.limit;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      // Every text match is a match: the third group's size is all the matches but the text's,
      // so its own filter (the match filter and the negated text filter) is evaluated only when
      // its quotes are read.
      const { text } = rankedSearches(query);
      const [first, all] = await this.#multiSearch([text, searchCount(query)], deadline);
      if (first === undefined || all === undefined) throw new Error('a multi-search lost a result');
      const inText = exactTotal(first);
      const others = exactTotal(all) - inText;
      const items = toItems(first);
      const end = Math.min(offset + query.limit, inText + others);
      if (offset + items.length >= end) return { items, total: inText + others };
      const from = Math.max(0, offset - inText);
      const more = await this.#search(restSearch(query, from, end - offset - items.length), deadline);
      // The same number of matches, or the catalogue was replaced between the two reads.
      if (more.estimatedTotalHits === others) {
        return { items: [...items, ...toItems(more)], total: inText + others };
      }
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while a page was read');
  }

  /**
   * `random` without a filter, when the catalogue's ids are every integer from its first to its
   * last: a uniform id, read by its primary key (the engine's cheapest read: no filter, no walk).
   * Undefined when the ids have gaps or the read saw another catalogue than the plan.
   */
  async #randomById(
    fields: readonly QuoteField[] | null,
    deadline: number,
  ): Promise<QuoteProjection | null | undefined> {
    const span = await this.#idSpan(deadline);
    if (span === undefined || !span.contiguous) return undefined;
    if (span.total === 0) return null;
    const hit = await this.#document(
      span.first + randomInt(span.total),
      [...retrievedFields(fields), 'catalogue_version'],
      deadline,
    );
    if (hit === null || hit.catalogue_version !== span.version) return undefined;
    return projectHit(hit, fields);
  }

  /**
   * A deep unfiltered page in id order, read as its range of ids when the catalogue's ids have no
   * gap: one cheap read, so it takes no deep-read slot. Undefined when the ids have gaps, for a
   * page past the last (the counted path confirms it), or when the read saw another catalogue.
   */
  async #pageById(
    query: ListQuery,
    deadline: number,
  ): Promise<{ results: MeiliQuoteDocument[]; total: number } | undefined> {
    const range = await this.#idRange(query, deadline);
    if (range === undefined) return undefined;
    const { span, request } = range;
    const response = await this.#fetch(request, deadline);
    const whole =
      response.total === request.limit &&
      response.results.length === request.limit &&
      response.results.every((hit) => hit.catalogue_version === span.version);
    return whole ? { results: response.results, total: span.total } : undefined;
  }

  /**
   * The catalogue's id span and the read of the page's range of ids in it; undefined when the ids
   * have gaps or the page lies past the last.
   */
  async #idRange(query: ListQuery, deadline: number) {
    const span = await this.#idSpan(deadline);
    if (span === undefined || !span.contiguous) return undefined;
    const request = idRangeRequest(
      span,
      query.sort[0]?.direction ?? 'asc',
      (query.page - 1) * query.limit,
      query.limit,
      query.fields,
    );
    return request === undefined ? undefined : { span, request };
  }

  /**
   * The first and last ids of the catalogue now live, and its size, read once per catalogue
   * version (and again after a read that found them inconsistent).
   */
  #idSpan(deadline: number): Promise<IdSpan | undefined> {
    const known = this.#span;
    const { version } = this.#info?.value ?? {};
    if (known !== undefined && known.version === version) return known.span;
    const span = this.info().then(async (info) => {
      const ends = await Promise.all(
        (['asc', 'desc'] as const).map((direction) => this.#fetch(idEndRequest(direction), deadline)),
      );
      const [low, high] = ends.map((response) => response.results[0]);
      const total = ends[0]?.total;
      if (
        low === undefined ||
        high === undefined ||
        total === undefined ||
        ends[1]?.total !== total ||
        low.catalogue_version !== info.version ||
        high.catalogue_version !== info.version ||
        !Number.isSafeInteger(low.id) ||
        !Number.isSafeInteger(high.id)
      ) {
        return undefined;
      }
      // Distinct integers, as many as the integers from the first to the last: every one of them.
      return {
        version: info.version,
        total,
        first: low.id,
        last: high.id,
        contiguous: high.id - low.id + 1 === total,
      };
    });
    const entry = { version: version ?? '', span };
    this.#span = entry;
    const forget = () => {
      if (this.#span === entry) this.#span = undefined;
    };
    span.then((found) => {
      if (found === undefined) forget();
      else entry.version = found.version;
    }, forget);
    return span;
  }

  /** A document by primary key with `fields`, or null when no document has it. */
  async #document(
    id: number,
    fields: readonly string[],
    deadline: number,
  ): Promise<Record<string, unknown> | null> {
    try {
      return await this.#call(async () =>
        documentAnswer(
          await this.#http.get<Record<string, unknown>>({
            path: `indexes/${encodeURIComponent(this.#options.index)}/documents/${id}`,
            params: { fields: fields.join(',') },
            deadline,
          }),
        ),
      );
    } catch (error) {
      if (error instanceof MeilisearchApiError && error.cause?.code === 'document_not_found') {
        this.#failure = undefined;
        return null;
      }
      throw error;
    }
  }

  #search(request: SearchRequest, deadline: number): Promise<SearchResponse> {
    return withSearchFields(
      this.#call(async () =>
        searchAnswer(
          await this.#http.post<SearchResponse>({
            path: this.#searchPath,
            body: request,
            deadline,
          }),
        ),
      ),
    );
  }

  async #multiSearch(requests: SearchRequest[], deadline: number): Promise<SearchResponse[]> {
    const queries = requests.map((request) => ({ indexUid: this.#options.index, ...request }));
    const answer = await withSearchFields(
      this.#call(async () => {
        const answer = await this.#http.post<{ results: SearchResponse[] }>({
          path: 'multi-search',
          body: { queries },
          deadline,
        });
        if (!isObject(answer) || !Array.isArray(answer.results) || answer.results.length !== queries.length) {
          throw malformedAnswer('a multi-search');
        }
        for (const result of answer.results) searchAnswer(result);
        return answer;
      }),
    );
    return answer.results;
  }

  /**
   * Draws distinct offsets in the exact total, then reads the quotes there: when every match's id
   * came with the total (at most SAMPLE_SCAN matches), one more read by id; otherwise one read
   * per run of nearby offsets, all at once. Every read names the build that answered it, and a
   * draw that saw two builds (a catalogue swapped in meanwhile) is drawn again.
   */
  randomSample(
    filters: Filters,
    fields: readonly QuoteField[] | null,
    count: number,
  ): Promise<QuoteProjection[]> {
    return withFilterFields(filters, this.#randomSample(filters, fields, count));
  }

  async #randomSample(
    filters: Filters,
    fields: readonly QuoteField[] | null,
    count: number,
  ): Promise<QuoteProjection[]> {
    const deadline = this.#deadline();
    // `q` is a filter too (meilisearch/search.ts): its matches are sampled as any others.
    const filter = filterExpression(buildFilter(filters));
    // The ids of every match come with the count when the whole catalogue is small; otherwise
    // the count comes first, alone, and the ids only if the matches turn out few.
    const scanLimit = this.#options.sampleScan ?? SAMPLE_SCAN;
    const known = this.#info?.value.count;
    const scanFirst = known !== undefined && known <= scanLimit;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let scan = await this.#fetch(
        scanFirst ? sampleScanRequest(filter, scanLimit) : countRequest(filter),
        deadline,
      );
      const total = scan.total;
      if (total === 0) return [];
      if (total > scanLimit) {
        const drawn = await this.#sampleByRejection(filter, total, fields, count, deadline);
        if (drawn !== undefined) return drawn;
      }
      let sameTotal = true;
      if (total <= scanLimit && scan.results.length !== total) {
        scan = await this.#fetch(sampleScanRequest(filter, scanLimit), deadline);
        sameTotal = scan.total === total;
      }
      const offsets = drawDistinct(total, count, randomInt);
      const versions = new Set(scan.results.map((hit) => hit.catalogue_version));
      let byOffset: Map<number, MeiliQuoteDocument>;
      if (total <= scanLimit && scan.results.length === total) {
        const ids = offsets.map((offset) => (scan.results[offset] as MeiliQuoteDocument).id);
        const read = await this.#fetch(sampleByIdsRequest(ids, fields), deadline);
        const byId = new Map(read.results.map((hit) => [hit.id, hit]));
        for (const hit of read.results) versions.add(hit.catalogue_version);
        byOffset = new Map();
        for (const [i, offset] of offsets.entries()) {
          const hit = byId.get(ids[i] as number);
          if (hit !== undefined) byOffset.set(offset, hit);
        }
      } else {
        const runs = sampleRunRequests(filter, offsets, fields);
        const answers = await this.#fetchSome(
          runs.map((run) => run.request),
          deadline,
        );
        byOffset = new Map();
        for (const [i, answer] of answers.entries()) {
          if (answer.total !== total) sameTotal = false;
          for (const [j, hit] of answer.results.entries()) {
            byOffset.set((runs[i] as { offset: number }).offset + j, hit);
            versions.add(hit.catalogue_version);
          }
        }
      }
      if (sameTotal && versions.size === 1 && offsets.every((offset) => byOffset.has(offset))) {
        return offsets.map((offset) => projectHit(byOffset.get(offset) as object, fields));
      }
      // The catalogue was replaced between the reads: draw again in the new one.
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while random quotes were drawn');
  }

  /**
   * `randomSample` among many matches with one evaluation of the filter per round instead of one
   * per run of offsets: candidate ids drawn uniformly without replacement in the catalogue's id
   * span, asked in batches which of them match; the first `count` matches in draw order are a
   * uniform sample without replacement (the matches come in a uniformly random order of the
   * span, whatever the rounds). Undefined when the matches are too sparse in the span for it,
   * the rounds found too few, or a read saw another catalogue: the caller reads offsets then.
   */
  async #sampleByRejection(
    filter: string | undefined,
    total: number,
    fields: readonly QuoteField[] | null,
    count: number,
    deadline: number,
  ): Promise<QuoteProjection[] | undefined> {
    if (this.#options.sampleByIds === false) return undefined;
    const span = await this.#idSpan(deadline);
    if (span === undefined) return undefined;
    const space = span.last - span.first + 1;
    const want = Math.min(count, total);
    if ((want * space) / total > MAX_SAMPLE_CANDIDATES) return undefined;
    const next = distinctDrawer(space, randomInt);
    const wanted = [...new Set([...retrievedFields(fields), 'id', 'catalogue_version'])];
    const out: MeiliQuoteDocument[] = [];
    for (let round = 0; round < SAMPLE_ROUNDS && out.length < want; round++) {
      // Enough candidates for the matches still wanted, at the matches' density, and some more.
      const size = Math.min(MAX_SAMPLE_BATCH, Math.ceil((((want - out.length) * space) / total) * 1.25) + 8);
      const ids: number[] = [];
      while (ids.length < size) {
        const at = next();
        if (at === undefined) break;
        ids.push(span.first + at);
      }
      if (ids.length === 0) break;
      const response = await this.#fetch(sampleCandidatesRequest(filter, ids, wanted), deadline);
      if (response.results.some((hit) => hit.catalogue_version !== span.version)) return undefined;
      const byId = new Map(response.results.map((hit) => [hit.id, hit]));
      for (const id of ids) {
        const hit = byId.get(id);
        if (hit !== undefined && out.length < want) out.push(hit);
      }
    }
    if (out.length < want) return undefined;
    return out.map((hit) => projectHit(hit, fields));
  }

  /**
   * Sends requests at most {@link SAMPLE_READS_AT_ONCE} at a time, answers in request order: one
   * call never floods the engine with all of its reads at once.
   */
  async #fetchSome(
    requests: readonly FetchRequest[],
    deadline: number,
  ): Promise<FetchResponse<MeiliQuoteDocument>[]> {
    const answers = new Array<FetchResponse<MeiliQuoteDocument>>(requests.length);
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const at = next++;
        answers[at] = await this.#fetch(requests[at] as FetchRequest, deadline);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SAMPLE_READS_AT_ONCE, requests.length) }, worker));
    return answers;
  }

  /** Takes a deep-read slot, waiting for one until half the call's remaining time; false if none came. */
  #admitDeep(deadline: number): Promise<boolean> {
    if (this.#deepReads < (this.#options.maxDeepReads ?? MAX_DEEP_READS)) {
      this.#deepReads++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const admit = (admitted: boolean) => {
        clearTimeout(timer);
        resolve(admitted);
      };
      const timer = setTimeout(
        () => {
          const at = this.#deepWaiting.indexOf(admit);
          if (at >= 0) this.#deepWaiting.splice(at, 1);
          resolve(false);
        },
        Math.max(0, (deadline - performance.now()) / 2),
      );
      this.#deepWaiting.push(admit);
    });
  }

  /** Ends a deep read: its slot goes to the oldest waiting page, else back to the pool. */
  #releaseDeep(): void {
    const next = this.#deepWaiting.shift();
    if (next === undefined) this.#deepReads--;
    else next(true);
  }

  /**
   * When a port call made now must have its answer: one `MEILI_TIMEOUT_MS` for the call, whatever
   * its reads, and for the client request it serves, whatever its calls (catalogue/budget.ts).
   */
  #deadline(): number {
    return readDeadline(this.#options.timeoutMs);
  }

  /** The engine reads of {@link readPageInRuns}, within the call's deadline. */
  #runReader(deadline: number) {
    return {
      fetch: (request: FetchRequest) => this.#fetch(request, deadline),
      search: (request: RunCountRequest) => {
        return this.#call(async () =>
          searchAnswer(
            await this.#http.post<RunCountResponse>({
              path: this.#searchPath,
              body: request,
              deadline,
            }),
          ),
        );
      },
    };
  }

  /**
   * A documents read of `fields`: the page as the engine wrote it when it can be passed through
   * (meilisearch/json.ts), else the answer parsed.
   */
  async #fetchPage(
    request: FetchRequest,
    fields: readonly QuoteField[],
    deadline: number,
  ): Promise<RawPage | FetchResponse<MeiliQuoteDocument>> {
    const ordered = this.#inEngineOrder(request);
    if (ordered !== undefined) {
      const answer = await this.#call(async () => {
        const body = await this.#http.postBytes({ path: this.#fetchPath, body: ordered.request, deadline });
        return (
          rawVersionedPage(body, fields, ordered.version) ??
          documentsAnswer(parseAnswer<FetchResponse<MeiliQuoteDocument>>(body))
        );
      });
      if ('items' in answer || ofVersion(answer, ordered.version)) return answer;
    }
    return this.#call(async () => {
      const body = await this.#http.postBytes({ path: this.#fetchPath, body: request, deadline });
      return rawPage(body, fields) ?? documentsAnswer(parseAnswer<FetchResponse<MeiliQuoteDocument>>(body));
    });
  }

  /**
   * A documents read; from a catalogue the engine holds in id order, in that order (its documents
   * then carry their version besides the fields asked for). An answer from another catalogue, one
   * swapped in since the mark was read, is read again as asked.
   */
  async #fetch(request: FetchRequest, deadline: number): Promise<FetchResponse<MeiliQuoteDocument>> {
    const ordered = this.#inEngineOrder(request);
    if (ordered !== undefined) {
      const answer = await this.#post(ordered.request, deadline);
      if (ofVersion(answer, ordered.version)) return answer;
    }
    return this.#post(request, deadline);
  }

  #post(request: FetchRequest, deadline: number): Promise<FetchResponse<MeiliQuoteDocument>> {
    return this.#call(async () =>
      documentsAnswer(
        await this.#http.post<FetchResponse<MeiliQuoteDocument>>({
          path: this.#fetchPath,
          body: request,
          deadline,
        }),
      ),
    );
  }

  /** `request` in the engine's order ({@link inEngineOrder}) when the catalogue is marked so. */
  #inEngineOrder(request: FetchRequest): { request: FetchRequest; version: string } | undefined {
    const version = this.#idOrdered;
    if (version === undefined) return undefined;
    const ordered = inEngineOrder(request);
    return ordered === undefined ? undefined : { request: ordered, version };
  }

  /**
   * One engine request, to `index` (the quotes' unless said); a failure the engine's state
   * explains is remembered for `info`. Not remembered, as the engine answered and still holds the
   * quotes' index: a search it shed for load (Retry-After; it is the same engine for every
   * replica, which would all turn unready at once), and an authors or works index it lacks (built
   * by an earlier release: the quotes are still served).
   */
  async #call<T>(request: () => Promise<T>, index = this.#options.index): Promise<T> {
    try {
      const answer = await request();
      this.#failure = undefined;
      return answer;
    } catch (error) {
      const where = index === this.#options.index ? this.#options : { ...this.#options, index };
      const portError = toPortError(error, where);
      if (
        portError instanceof CatalogueUnavailableError &&
        portError.retryAfterSeconds === undefined &&
        !(index !== this.#options.index && isIndexNotFound(error))
      ) {
        this.#failure = portError;
      }
      throw portError;
    }
  }
}

/**
 * `answer` when it is a documents read's answer: a list of documents and an exact total. Anything
 * else (an engine of another version, a proxy answering 200 for it, an empty body) is an outage
 * of the engine, not a bug of the service: read on as a page, it would fail deep in a route as a
 * 500 while `/ready` still said ready.
 */
function documentsAnswer<T>(answer: FetchResponse<T>): FetchResponse<T> {
  if (!isObject(answer) || !isCount(answer.total) || !Array.isArray(answer.results)) {
    throw malformedAnswer('a documents read');
  }
  for (const hit of answer.results) if (!isObject(hit)) throw malformedAnswer('a documents read');
  return answer;
}

/** `answer` when it is one document ({@link documentsAnswer}). */
function documentAnswer<T>(answer: T): T {
  if (!isObject(answer)) throw malformedAnswer('a document read');
  return answer;
}

/** `answer` when it is a search's answer: a list of hits ({@link documentsAnswer}). */
function searchAnswer<T extends { hits: unknown[] }>(answer: T): T {
  if (!isObject(answer) || !Array.isArray(answer.hits)) throw malformedAnswer('a search');
  for (const hit of answer.hits) if (!isObject(hit)) throw malformedAnswer('a search');
  return answer;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformedAnswer(read: string): CatalogueUnavailableError {
  return new CatalogueUnavailableError(`Meilisearch answered ${read} with JSON of another shape`);
}

/** Whether every document of `answer` was written by the build of `version`. */
function ofVersion(answer: FetchResponse<MeiliQuoteDocument>, version: string): boolean {
  return answer.results.every((hit) => hit.catalogue_version === version);
}

function isIndexNotFound(error: unknown): boolean {
  return error instanceof MeilisearchApiError && error.cause?.code === 'index_not_found';
}

/**
 * A search refused because the index cannot search the text fields (`q_text`…): an index built
 * by a release before `q`, which still serves every other request. Not a bug of the request,
 * and cured by the indexer: 503, saying so. A filter the index cannot apply (the search fields'
 * or the ranges') is named by {@link withFilterFields}, around every call that searches.
 */
async function withSearchFields<T>(search: Promise<T>): Promise<T> {
  try {
    return await search;
  } catch (error) {
    if (
      error instanceof MeilisearchApiError &&
      error.cause?.code === 'invalid_search_attributes_to_search_on'
    ) {
      throw noSearchFields(error);
    }
    throw error;
  }
}

function noSearchFields(cause: unknown): CatalogueUnavailableError {
  return new CatalogueUnavailableError(
    'the Meilisearch index has no full-text search fields (built by an earlier release): run the indexer',
    { cause },
  );
}

/** The attributes range filters compare, which an index built before them cannot filter on. */
const RANGE_ATTRIBUTES = new Set(['quote_length', 'publish_day']);
/** The attributes `q` filters on, which an index built before `q` cannot filter on. */
const SEARCH_FILTER_ATTRIBUTES = new Set(['q_words', 'q_text_words']);

/**
 * A call with range filters or `q` on an index built by a release before them: the engine refuses
 * the filter (400), which is not a bug of the request but an index to rebuild, so 503, saying so.
 */
async function withFilterFields<T>(filters: Filters, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    const missing = unfilterable(error);
    if (rangeFilter(filters.ranges).length > 0 && missing.some((a) => RANGE_ATTRIBUTES.has(a))) {
      throw new CatalogueUnavailableError(
        'the Meilisearch index cannot filter ranges (built by an earlier release): run the indexer',
        { cause: error },
      );
    }
    if (filters.q !== undefined && missing.some((a) => SEARCH_FILTER_ATTRIBUTES.has(a))) {
      throw noSearchFields(error);
    }
    throw error;
  }
}

/**
 * The attributes a filter the engine refused named as not filterable ("Attribute `a` is not
 * filterable", "Attributes `a, b` are not filterable"); the message goes on to list the ones
 * that are, which say nothing of what is missing.
 */
function unfilterable(error: unknown): string[] {
  // An attribute the indexer declares is already an outage (toPortError): its cause names it.
  if (error instanceof CatalogueUnavailableError) return unfilterable(error.cause);
  if (
    !(error instanceof MeilisearchApiError) ||
    !['invalid_document_filter', 'invalid_search_filter'].includes(error.cause?.code ?? '')
  ) {
    return [];
  }
  const named = /Attributes? `([^`]*)` (?:is|are) not filterable/.exec(error.message);
  return named === null ? [] : (named[1] as string).split(', ');
}

/** The exact number of matches of a search read by page (see meilisearch/search.ts). */
function exactTotal(response: SearchResponse): number {
  const total = response.totalHits ?? response.estimatedTotalHits;
  if (!isCount(total)) throw malformedAnswer('a search (no number of hits)');
  return total;
}

/** A page the engine's time budget left partly unranked: not served (search.ts, exactness). */
function cutShortError(): CatalogueUnavailableError {
  return new CatalogueUnavailableError('Meilisearch cut the search short (searchCutoffMs)', {
    retryAfterSeconds: ENGINE_BUSY_RETRY_AFTER_S,
  });
}

/**
 * The port's reading of a client error: {@link CatalogueUnavailableError} for anything the
 * engine's state explains (the call may succeed later), the error itself for a bad request.
 */
export function toPortError(
  error: unknown,
  where: { host: string; index: string; timeoutMs: number },
): unknown {
  if (error instanceof MeilisearchRequestError) {
    if (
      error.cause instanceof MeilisearchRequestTimeOutError ||
      (error.cause instanceof Error && error.cause.name === 'TimeoutError')
    ) {
      return new CatalogueUnavailableError(
        `Meilisearch at ${where.host} did not answer within ${where.timeoutMs} ms`,
        { cause: error },
      );
    }
    return new CatalogueUnavailableError(
      `Meilisearch at ${where.host} is unreachable (${networkReason(error.cause)})`,
      { cause: error },
    );
  }
  if (error instanceof MeilisearchApiError) {
    const status = error.response.status;
    const code = error.cause?.code;
    if (code === 'too_many_search_requests') {
      return new CatalogueUnavailableError('Meilisearch is busy (too_many_search_requests)', {
        cause: error,
        retryAfterSeconds: ENGINE_BUSY_RETRY_AFTER_S,
      });
    }
    if (code !== undefined && OLDER_INDEX_CODES.has(code) && namesIndexedAttribute(error.message)) {
      return new CatalogueUnavailableError(
        `Meilisearch index '${where.index}' lacks attributes this release reads (${code}): run the indexer to rebuild it`,
        { cause: error },
      );
    }
    if (code === 'index_not_found') {
      return new CatalogueUnavailableError(
        `Meilisearch holds no index '${where.index}' yet: run the indexer`,
        { cause: error },
      );
    }
    if (status === 401 || status === 403) {
      return new CatalogueUnavailableError(
        `Meilisearch refused the API key (${code ?? status}): check MEILI_API_KEY`,
        { cause: error },
      );
    }
    if (status >= 500 || code === undefined) {
      return new CatalogueUnavailableError(`Meilisearch answered HTTP ${status}`, { cause: error });
    }
    return error;
  }
  // The client parses every body as JSON: a proxy's error page in front of the engine lands here.
  if (error instanceof SyntaxError) {
    return new CatalogueUnavailableError('Meilisearch answered with a body that is not JSON', {
      cause: error,
    });
  }
  return error;
}

/**
 * Codes the engine answers to a filter, sort or facet on an attribute its index does not declare.
 * On an attribute the indexer declares ({@link INDEXED_ATTRIBUTES}) that means an index whose
 * settings are not the indexer's (built by an earlier release, or changed since), cured by the
 * indexer (503); on any other attribute, a bug of the request (500).
 */
const OLDER_INDEX_CODES = new Set([
  'invalid_document_filter',
  'invalid_document_sort',
  'invalid_search_filter',
  'invalid_search_sort',
  'invalid_search_facets',
]);

/**
 * The attributes the indexer makes filterable or sortable in the quotes, authors and works
 * indexes, which the requests of this release name.
 */
const INDEXED_ATTRIBUTES: ReadonlySet<string> = new Set(
  [MEILI_SETTINGS, AUTHORS_SETTINGS, WORKS_SETTINGS].flatMap((settings) => [
    ...settings.filterableAttributes,
    ...settings.sortableAttributes,
  ]),
);

/**
 * The facets every quote has exactly one value of. A quote has several genres, and a quote whose
 * record gave no language has none (and a catalogue holds fewer languages than the engine lists).
 */
const ONE_VALUE_PER_QUOTE: ReadonlySet<FacetField> = new Set(['author', 'work', 'category']);

/**
 * Whether the attributes an engine message refuses (`Attribute \`language\` is not filterable.
 * Available…`, `Attributes \`a, b\` are…`, `…, attribute \`a\` is not filterable`: the first ones
 * it names, not those it goes on to list as available) are all {@link INDEXED_ATTRIBUTES}.
 */
function namesIndexedAttribute(message: string): boolean {
  const refused = /[Aa]ttributes? `([^`]+)`/.exec(message)?.[1];
  return refused?.split(', ').every((attribute) => INDEXED_ATTRIBUTES.has(attribute)) === true;
}

/** The system error code behind a failed fetch (ECONNREFUSED, ENOTFOUND...), or its message. */
export function networkReason(cause: unknown): string {
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    if (current.cause === undefined) return current.message;
    current = current.cause;
  }
  return 'network error';
}
