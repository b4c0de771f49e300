/**
 * The reader's HTTP requests to Meilisearch, over a keep-alive connection pool of undici's
 * (`Pool.request`) rather than the official client's `fetch`: the same requests and the same
 * errors (the client's error classes, so that `toPortError` reads them alike), for less than
 * half of the service's CPU per request. The client's fetch built a `Request`, `Headers` and a
 * web stream for every call, and on the listing paths that cost as much as the service's own work.
 */
import { MeilisearchApiError, MeilisearchRequestError } from 'meilisearch';
import { Pool } from 'undici';

/** One request: a path under the engine's address, a JSON body or query parameters, a deadline. */
export interface EngineRequest {
  path: string;
  body?: unknown;
  params?: Record<string, string>;
  extraRequestInit?: { signal?: AbortSignal };
}

/** The two calls the reader makes, shaped as the client's `httpRequest` so that callers stay alike. */
export interface EngineHttp {
  get<T>(request: EngineRequest): Promise<T>;
  post<T>(request: EngineRequest): Promise<T>;
  close(): Promise<void>;
}

export function engineHttp(host: string, apiKey: string | undefined): EngineHttp {
  const base = new URL(/^https?:\/\//.test(host) ? host : `http://${host}`);
  // A host with a path (behind a proxy) keeps it in front of every request path.
  const prefix = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    // Uncompressed answers: the engine sits next to the service, and compressing each answer
    // there and inflating it here cost more CPU than the service's own work on a listing.
    'accept-encoding': 'identity',
  };
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  let pool: Pool | undefined;
  const request = async <T>(
    method: 'GET' | 'POST',
    { path, body, params, extraRequestInit }: EngineRequest,
  ) => {
    const query = params === undefined ? '' : `?${new URLSearchParams(params).toString()}`;
    const target = `${prefix}${path}${query}`;
    pool ??= new Pool(base.origin);
    let status: number;
    let text: string;
    try {
      const answer = await pool.request({
        method,
        path: target,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: extraRequestInit?.signal,
      });
      status = answer.statusCode;
      text = await answer.body.text();
    } catch (error) {
      throw new MeilisearchRequestError(`${base.origin}${target}`, error);
    }
    // A body that is not JSON (a proxy's error page) throws a SyntaxError, as the client did.
    const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
    if (status < 200 || status > 299) {
      throw new MeilisearchApiError(
        new Response(null, { status }),
        parsed as ConstructorParameters<typeof MeilisearchApiError>[1],
      );
    }
    return parsed as T;
  };
  return {
    get: (r) => request('GET', r),
    post: (r) => request('POST', r),
    async close() {
      const open = pool;
      pool = undefined;
      await open?.close();
    },
  };
}
