/**
 * The Meilisearch adapter of the catalogue port, read side. Every call is one or two searches on
 * the live index (the service holds a search-only key, so nothing else is allowed); the requests
 * themselves are built by `meilisearch-request.ts`.
 *
 * Availability: the client's per-request timeout bounds every call, and engine failures become
 * {@link CatalogueUnavailableError} (HTTP 503): unreachable, timed out, answering 5xx or non-JSON,
 * refusing the key, or holding no index yet. Any other refusal is a request this adapter built
 * wrongly, a bug, and is rethrown as is (HTTP 500).
 *
 * Live reload comes for free: the indexer swaps a finished index into the live name, and the
 * next search reads it.
 */
import { randomInt } from 'node:crypto';
import {
  type Index,
  Meilisearch,
  MeilisearchApiError,
  MeilisearchRequestError,
  MeilisearchRequestTimeOutError,
  type SearchParams,
  type SearchResponse,
} from 'meilisearch';
import {
  buildFilter,
  countRequest,
  getRequest,
  infoRequest,
  isPastEveryCatalogue,
  listRequest,
  type MeiliQuoteDocument,
  pickRequest,
  projectHit,
} from './meilisearch-request.ts';
import {
  type CatalogueIndex,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  type Filters,
  type ListQuery,
  type ListResult,
  type QuoteField,
  type QuoteProjection,
} from './port.ts';

/** How long {@link CatalogueIndex.info} answers from memory: it is read on every request (ETags). */
export const INFO_TTL_MS = 1_000;
/** Draws of `random` before giving up while the catalogue keeps changing under it. */
const RANDOM_ATTEMPTS = 3;

export interface MeiliCatalogueOptions {
  /** Engine address, e.g. `http://127.0.0.1:7700`. */
  host: string;
  /** A key allowed to search the index (a search-only key in production). */
  apiKey: string | undefined;
  /** Live index uid. */
  index: string;
  /** Upper bound of one engine request; past it the call fails with CatalogueUnavailableError. */
  timeoutMs: number;
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
  readonly #index: Index<MeiliQuoteDocument>;
  #info: { value: CatalogueInfo; at: number } | undefined;
  #pendingInfo: Promise<CatalogueInfo> | undefined;

  constructor(options: MeiliCatalogueOptions) {
    this.#options = options;
    const client = new Meilisearch({
      host: options.host,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
    });
    this.#index = client.index<MeiliQuoteDocument>(options.index);
  }

  info(): Promise<CatalogueInfo> {
    const cached = this.#info;
    if (cached !== undefined && performance.now() - cached.at < INFO_TTL_MS) {
      return Promise.resolve(cached.value);
    }
    // Concurrent callers share one request; a failure is not cached, so the next call retries.
    this.#pendingInfo ??= this.#loadInfo().finally(() => {
      this.#pendingInfo = undefined;
    });
    return this.#pendingInfo;
  }

  async #loadInfo(): Promise<CatalogueInfo> {
    const response = await this.#search(infoRequest());
    const hit = response.hits[0];
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
    const info = { version, count: response.totalHits };
    if (this.#info?.value.version !== version) {
      this.#options.logger?.info({ backend: this.kind, ...info }, 'serving catalogue');
    }
    this.#info = { value: info, at: performance.now() };
    return info;
  }

  async list(query: ListQuery): Promise<ListResult> {
    if (isPastEveryCatalogue(query)) {
      const response = await this.#search(countRequest(buildFilter(query.filters)));
      return { items: [], total: response.totalHits };
    }
    const response = await this.#search(listRequest(query));
    return {
      items: response.hits.map((hit) => projectHit(hit, query.fields)),
      total: response.totalHits,
    };
  }

  async get(id: number, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const response = await this.#search(getRequest(id, fields));
    const hit = response.hits[0];
    return hit === undefined ? null : projectHit(hit, fields);
  }

  async random(filters: Filters, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const filter = buildFilter(filters);
    for (let attempt = 0; attempt < RANDOM_ATTEMPTS; attempt++) {
      const total = (await this.#search(countRequest(filter))).totalHits;
      if (total === 0) return null;
      const hit = (await this.#search(pickRequest(filter, randomInt(total), fields))).hits[0];
      if (hit !== undefined) return projectHit(hit, fields);
      // The catalogue was replaced by a smaller one between the two searches: draw again.
    }
    throw new CatalogueUnavailableError('the catalogue kept changing while a random quote was drawn');
  }

  async close(): Promise<void> {
    // The client keeps no connection of its own (fetch's shared pool does); only drop the cache.
    this.#info = undefined;
  }

  async #search<S extends SearchParams>(request: S): Promise<SearchResponse<MeiliQuoteDocument, S>> {
    try {
      return await this.#index.search<MeiliQuoteDocument, S>(undefined, request);
    } catch (error) {
      throw toPortError(error, this.#options);
    }
  }
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
    if (error.cause instanceof MeilisearchRequestTimeOutError) {
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
