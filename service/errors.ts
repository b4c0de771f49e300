/**
 * The service's one error vocabulary (api-contract.md section 2). Anything that answers an error
 * throws an {@link ApiError}; the app's error handler turns it into the Error object
 * `{ code, error, details }`. Everything else that reaches the handler is a bug and answers 500
 * without internals.
 */

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

  constructor(
    statusCode: ErrorStatus,
    details: string,
    options?: { error?: ErrorId; headers?: Record<string, string>; cause?: unknown },
  ) {
    super(details, options?.cause === undefined ? undefined : { cause: options.cause });
    this.statusCode = statusCode;
    this.error = options?.error ?? ERROR_IDS[statusCode];
    this.details = details;
    this.headers = options?.headers ?? {};
  }

  toBody(): ErrorBody {
    return { code: this.statusCode, error: this.error, details: this.details };
  }
}

export const badRequest = (details: string) => new ApiError(400, details);
export const notFound = (details: string) => new ApiError(404, details);
export const unavailable = (details: string, cause?: unknown) => new ApiError(503, details, { cause });
