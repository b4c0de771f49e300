/**
 * The log of the 5xx answers. A failure of the engine's state (503: an engine down or hung, deep
 * reads shed under load) repeats for every request while it lasts: logged each time with its
 * stack, it would write thousands of lines a second, spend the CPU the service needs to recover
 * and bury everything else. So each kind of such failure (its message) is logged when it first
 * happens, then at most once per {@link REPEAT_MS} with the number of the same since; the
 * metrics still count every answer. A 500 is a bug, and every one is logged.
 */
import type { FastifyRequest } from 'fastify';
import type { ApiError } from './errors.ts';

/** How often one kind of repeating failure is logged. */
export const REPEAT_MS = 10_000;
/** Kinds remembered at once; past this they are forgotten, and each is logged again. */
const MAX_KINDS = 1_000;

export class FailureLog {
  readonly #now: () => number;
  readonly #kinds = new Map<string, { at: number; since: number }>();

  constructor(now: () => number) {
    this.#now = now;
  }

  log(request: FastifyRequest, apiError: ApiError, error: unknown): void {
    if (apiError.statusCode === 500) {
      request.log.error({ err: error }, 'request failed with an internal error');
      return;
    }
    const kind = error instanceof Error ? `${error.name}: ${error.message}` : apiError.details;
    const now = this.#now();
    const seen = this.#kinds.get(kind);
    if (seen !== undefined && now - seen.at < REPEAT_MS) {
      seen.since++;
      return;
    }
    if (seen === undefined && this.#kinds.size >= MAX_KINDS) this.#kinds.clear();
    this.#kinds.set(kind, { at: now, since: 0 });
    if (seen === undefined || seen.since === 0) request.log.warn({ err: error }, apiError.details);
    else {
      request.log.warn(
        { err: error, alike: seen.since },
        `${apiError.details} (and ${seen.since} more of the same in the last ${Math.round((now - seen.at) / 1000)} s, not logged)`,
      );
    }
  }
}
