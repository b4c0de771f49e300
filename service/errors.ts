/**
 * The service's one error vocabulary (docs/api.md#errors). Anything that answers an error
 * throws an {@link ApiError}; the app's error handler turns it into the Error object
 * `{ code, error, details }`. Everything else that reaches the handler is a bug and answers 500
 * without internals.
 */
import { CatalogueUnavailableError } from './catalogue/port.ts';

export const ERROR_IDS = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  429: 'too_many_requests',
  500: 'internal_server_error',
  503: 'service_unavailable',
} as const;

export type ErrorStatus = keyof typeof ERROR_IDS;
export type ErrorId = (typeof ERROR_IDS)[ErrorStatus] | 'invalid_credentials';

/** The contract's Error object. */
export interface ErrorBody {
  code: number;
  error: string;
  details: string;
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly statusCode: number;
  readonly error: ErrorId;
  readonly details: string;
  /** Extra response headers (WWW-Authenticate, Allow, Retry-After, rate-limit headers). */
  readonly headers: Record<string, string>;
  /** Already reported where it arose: the error handler does not log it again, even as a 5xx. */
  readonly reported: boolean;

  constructor(
    statusCode: ErrorStatus,
    details: string,
    options?: { error?: ErrorId; headers?: Record<string, string>; cause?: unknown; reported?: boolean },
  ) {
    super(details, options?.cause === undefined ? undefined : { cause: options.cause });
    this.statusCode = statusCode;
    this.error = options?.error ?? ERROR_IDS[statusCode];
    this.details = details;
    this.headers = options?.headers ?? {};
    this.reported = options?.reported ?? false;
  }

  toBody(): ErrorBody {
    return { code: this.statusCode, error: this.error, details: this.details };
  }
}

export const badRequest = (details: string) => new ApiError(400, details);
export const notFound = (details: string) => new ApiError(404, details);
/**
 * Seconds a client is told to wait after an outage's 503: a replica learns within a second or
 * two that its engine or store is back, and a client that retried at once would only add load.
 */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

export const unavailable = (details: string, cause?: unknown, options?: { reported?: boolean }) =>
  new ApiError(503, details, {
    cause,
    reported: options?.reported,
    headers: { 'retry-after': String(OUTAGE_RETRY_AFTER_SECONDS) },
  });

/** Methods every known path accepts, as the `Allow` header of a 405 lists them. */
export const ALLOWED_METHODS = 'GET, HEAD';

export const methodNotAllowed = (method: string, path: string) =>
  new ApiError(405, `${method} is not allowed on ${path}; use ${ALLOWED_METHODS}`, {
    headers: { allow: ALLOWED_METHODS },
  });

/** The details every 500 carries: a client never sees why. */
export const INTERNAL_DETAILS = 'An internal error occurred; it has been logged';

/** Fastify errors whose message is written for the client and safe to repeat. */
const FRAMEWORK_DETAILS: Record<string, string> = {
  FST_ERR_BAD_URL: 'the URL is not valid: its path has malformed percent-encoding',
  FST_ERR_CTP_BODY_TOO_LARGE: 'the request body is too large; these endpoints take no body',
  FST_ERR_CTP_INVALID_MEDIA_TYPE:
    'the request body has an unsupported content-type; these endpoints take no body',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'the request body does not match its content-length',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the request body is empty but its content-type is application/json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the request body is not valid JSON',
};

/**
 * Turns anything the error handler receives into an {@link ApiError}. `internal` is true when
 * the error is a bug or an outage that must be logged with its cause; such errors never put
 * their own message in the response.
 */
export function toApiError(error: unknown): { apiError: ApiError; internal: boolean } {
  if (error instanceof ApiError) return { apiError: error, internal: error.statusCode >= 500 };
  if (error instanceof CatalogueUnavailableError) {
    if (error.retryAfterSeconds !== undefined) {
      return {
        apiError: new ApiError(
          503,
          `The quote catalogue is busy; try again in ${error.retryAfterSeconds} s`,
          { cause: error, headers: { 'retry-after': String(error.retryAfterSeconds) } },
        ),
        internal: true,
      };
    }
    return {
      apiError: unavailable(
        'The quote catalogue is not available right now; try again in a few seconds',
        error,
      ),
      internal: true,
    };
  }
  const e = error as { code?: unknown; statusCode?: unknown; message?: unknown } | null;
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = typeof e?.code === 'string' ? e.code : '';
    if (status === 404) return { apiError: notFound('No resource at this path'), internal: false };
    if (status === 429) {
      const details = typeof e?.message === 'string' ? e.message : 'Too many requests';
      return { apiError: new ApiError(429, details), internal: false };
    }
    // Every other client error (415, 413, malformed bodies and URLs) is a bad request: the
    // contract lists no other 4xx statuses.
    const details = FRAMEWORK_DETAILS[code] ?? 'the request could not be understood';
    return { apiError: badRequest(details), internal: false };
  }
  if (status === 503) {
    return {
      apiError: unavailable('The service is not available right now; try again shortly'),
      internal: true,
    };
  }
  return { apiError: new ApiError(500, INTERNAL_DETAILS, { cause: error }), internal: true };
}
