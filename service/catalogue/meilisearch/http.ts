/**
 * The reader's HTTP requests to Meilisearch, over a keep-alive connection pool of undici's,
 * dispatched with a handler of this file's rather than through `Pool.request`: the same requests
 * and the same errors (the client's error classes, so that `toPortError` reads them alike), for
 * a fraction of the service's CPU per request. The official client's `fetch` built a `Request`,
 * `Headers` and a web stream for every call; `Pool.request` still built a readable stream, an
 * async resource and an `AbortSignal` with its timer and listeners for an answer of a few
 * kilobytes that is read whole anyway. Here an answer is collected as the chunks arrive, and the
 * call's deadline is one timer.
 */
import { MeilisearchApiError, MeilisearchRequestError } from 'meilisearch';
import { type Dispatcher, Pool } from 'undici';
import { DEFAULT_ENGINE_CONNECTIONS } from './request.ts';

/** One request: a path under the engine's address, a JSON body or query parameters, a deadline. */
export interface EngineRequest {
  path: string;
  body?: unknown;
  params?: Record<string, string>;
  /**
   * When the answer must have arrived, on the `performance.now()` clock: past it the request is
   * aborted and fails as a timeout (a `MeilisearchRequestError` caused by a `TimeoutError`).
   */
  deadline: number;
}

/** The calls the reader makes: a parsed JSON answer, or its bytes as the engine sent them. */
export interface EngineHttp {
  get<T>(request: EngineRequest): Promise<T>;
  post<T>(request: EngineRequest): Promise<T>;
  /** The UTF-8 bytes of a successful answer, unparsed; a failure throws as `post` does. */
  postBytes(request: EngineRequest): Promise<Buffer>;
  getBytes(request: EngineRequest): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * The reader's requests over at most `connections` connections: a request beyond them waits in
 * order for one (within its deadline), so the engine works on at most that many at once.
 */
export function engineHttp(
  host: string,
  apiKey: string | undefined,
  connections = DEFAULT_ENGINE_CONNECTIONS,
): EngineHttp {
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
  const exchange = async (method: 'GET' | 'POST', { path, body, params, deadline }: EngineRequest) => {
    const query = params === undefined ? '' : `?${new URLSearchParams(params).toString()}`;
    const target = `${prefix}${path}${query}`;
    pool ??= new Pool(base.origin, { connections });
    const dispatcher = pool;
    try {
      return await new Promise<Answer>((resolve, reject) => {
        dispatcher.dispatch(
          {
            method,
            path: target,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
          },
          new Collector(resolve, reject, deadline),
        );
      });
    } catch (error) {
      throw new MeilisearchRequestError(`${base.origin}${target}`, error);
    }
  };
  /** A successful answer's bytes; any other status throws the client's error with the engine's reason. */
  const bytes = async (method: 'GET' | 'POST', request: EngineRequest): Promise<Buffer> => {
    const { status, body } = await exchange(method, request);
    if (status < 200 || status > 299) {
      throw new MeilisearchApiError(
        new Response(null, { status }),
        parseAnswer<ConstructorParameters<typeof MeilisearchApiError>[1]>(body),
      );
    }
    return body;
  };
  const json = async <T>(method: 'GET' | 'POST', request: EngineRequest): Promise<T> =>
    parseAnswer<T>(await bytes(method, request));
  return {
    get: (r) => json('GET', r),
    post: (r) => json('POST', r),
    postBytes: (r) => bytes('POST', r),
    getBytes: (r) => bytes('GET', r),
    async close() {
      const open = pool;
      pool = undefined;
      await open?.close();
    },
  };
}

/** An answer read whole. */
interface Answer {
  status: number;
  body: Buffer;
}

/**
 * Collects one answer, or fails at the deadline: the request is aborted then, wherever it is
 * (still queued for a connection, sent, or half read), and the call fails at once.
 */
class Collector implements Dispatcher.DispatchHandler {
  readonly #resolve: (answer: Answer) => void;
  readonly #reject: (error: unknown) => void;
  readonly #timer: NodeJS.Timeout;
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #chunks: Buffer[] = [];
  #length = 0;
  /** Why the call failed before the engine was done with it (its deadline passed). */
  #reason: Error | undefined;
  #settled = false;

  constructor(resolve: (answer: Answer) => void, reject: (error: unknown) => void, deadline: number) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#timer = setTimeout(
      Collector.#expire,
      Math.max(1, Math.ceil(deadline - performance.now())),
      this,
    ).unref();
  }

  /** The deadline passed: what `AbortSignal.timeout` would have aborted the request with. */
  static #expire(this: void, collector: Collector): void {
    if (collector.#settled) return;
    const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    collector.#reason = reason;
    collector.#fail(reason);
    collector.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#reason !== undefined) controller.abort(this.#reason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    // Informational answers (1xx) are followed by the real one.
    if (statusCode >= 200) this.#status = statusCode;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    const chunks = this.#chunks;
    this.#chunks = [];
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#length);
    this.#resolve({ status: this.#status, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(error);
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#chunks = [];
    this.#reject(error);
  }
}

/**
 * An answer's JSON, undefined for an empty body. A body that is not JSON (a proxy's error page)
 * throws a SyntaxError, as the client did.
 */
export function parseAnswer<T>(body: Buffer): T {
  return (body.length === 0 ? undefined : JSON.parse(body.toString('utf8'))) as T;
}
