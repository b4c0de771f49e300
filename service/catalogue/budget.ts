/**
 * One time budget per client request, shared by every engine read made for it. A route may make
 * several port calls one after the other (the catalogue version, then the data; the quote of the
 * day counts its matches, then reads one), and a port call several reads: bounded one by one, they
 * could together keep a client waiting several times the engine timeout. The first read of a
 * request sets its deadline, and every later read of that request ends by it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const requests = new AsyncLocalStorage<{ deadline?: number } | undefined>();

/** Runs `work` as one client request: the engine reads it makes share one deadline. */
export function asOneRequest<T>(work: () => T): T {
  return requests.run({}, work);
}

/** Runs `work` apart from the request it is started in (work that outlives it, or serves others). */
export function apartFromRequest<T>(work: () => T): T {
  return requests.run(undefined, work);
}

/** When a read that may take `timeoutMs` must end: by the request's deadline, once one is set. */
export function readDeadline(timeoutMs: number): number {
  const own = performance.now() + timeoutMs;
  const request = requests.getStore();
  if (request === undefined) return own;
  request.deadline ??= own;
  return request.deadline;
}
