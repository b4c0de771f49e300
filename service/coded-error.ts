/**
 * The base of the project's own errors. Each carries a `code` naming what went wrong, in the
 * words the HTTP Error object uses for its `error` (`bad_request`, `service_unavailable`): callers,
 * logs and tests tell errors apart by it instead of by their messages.
 */
export abstract class CodedError extends Error {
  abstract readonly code: string;
}
