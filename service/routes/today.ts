/**
 * `GET /quotes/today`: the quote of the day. One quote per UTC day and filter set, the same on
 * every replica and on both engines, each match as likely as any other. The UTC date and the
 * canonical filters seed an order of the catalogue's id span (from its lowest id to its highest,
 * shuffled by SHA-256 draws); the first match among the first {@link DAY_CANDIDATES} ids of that
 * order is the day's, found by asking which of them match (one evaluation of the filters,
 * whatever the catalogue's size). When none of them does (sparse matches), the matches are
 * counted, and the SHA-256 of the date and filters picks an offset among them, read in id order. It changes at midnight UTC (or when the catalogue changes); caches may
 * keep it until then, hence `Cache-Control: public, max-age=<seconds until midnight UTC>`.
 *
 * `public` lets a shared cache store an answer to a request that carried credentials, and a
 * shared cache that stored one would hand it to anyone asking the same URL, credentials or not.
 * `Vary` on the headers that let the request in keeps each stored answer for requests that
 * carry the same ones: a client without them reaches the service, and its 401.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  type CatalogueIndex,
  CatalogueUnavailableError,
  type Filters,
  type QuoteField,
  type QuoteProjection,
} from '../catalogue/port.ts';
import { distinctDrawer, seededRandom } from '../catalogue/sample.ts';
import { notFound } from '../errors.ts';
import { bodyBytes, etagFor, ifNoneMatchHits } from '../etag.ts';
import { filtersKey, parseTodayQuery, readQuery } from '../query.ts';
import { todayQuoteSchema } from '../schemas.ts';

const DAY_MS = 86_400_000;

/** The request headers that decide whether a quote path is served at all (docs/api.md#authentication). */
const VARY_ON_ACCESS = ['Authorization', 'X-Bypass-Auth'] as const;

/** `Vary` with `names` added to what it already lists (CORS adds `Origin` before the handler runs). */
function varyAlso(current: unknown, names: readonly string[]): string {
  const listed = typeof current === 'string' && current !== '' ? current.split(',').map((n) => n.trim()) : [];
  const known = new Set(listed.map((n) => n.toLowerCase()));
  return [...listed, ...names.filter((n) => !known.has(n.toLowerCase()))].join(', ');
}

/** The UTC date of an instant, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Whole seconds from an instant to the next midnight UTC, rounded up: 1 to 86,400. */
export function secondsUntilMidnight(ms: number): number {
  const midnight = (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
  return Math.max(1, Math.ceil((midnight - ms) / 1000));
}

/** The offset of the day's quote among `total` matches: a hash of the day and the filters. */
export function dayOffset(day: string, filters: string, total: number): number {
  const digest = createHash('sha256').update(`${day}\n${filters}`).digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(total));
}

/** Reads of the day's quote before giving up while the catalogue keeps changing. */
const ATTEMPTS = 3;

/**
 * The quote of `day` among the quotes matching `filters`, or null when none does: the exact
 * count, then the quote at the day's offset in id order. A count that changed between the two
 * reads (a catalogue swapped in) is taken again.
 */
export async function quoteOfTheDay(
  catalogue: CatalogueIndex,
  filters: Filters,
  fields: readonly QuoteField[] | null,
  day: string,
): Promise<QuoteProjection | null> {
  const key = filtersKey(filters);
  const drawn = await firstInDayOrder(catalogue, filters, fields, `${day}\n${key}`);
  if (drawn !== null) return drawn;
  let total = (await catalogue.list({ filters, sort: [], page: 1, limit: 1, fields: ['id'] })).total;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (total === 0) return null;
    const offset = dayOffset(day, key, total);
    const read = await catalogue.list({ filters, sort: [], page: offset + 1, limit: 1, fields });
    const quote = read.items[0];
    if (read.total === total && quote !== undefined) return quote;
    total = read.total;
  }
  throw new CatalogueUnavailableError('the catalogue kept changing while the quote of the day was chosen');
}

/**
 * Candidates of the day's order asked about, in one read of the filters. Each candidate costs the
 * engine a lookup of its id (1,000 of them took longer than the filters they were asked with, on
 * a million quotes); matches of one id in 20 or more are found among 128 but for 0.1% of days.
 */
export const DAY_CANDIDATES = 128;

/** Each catalogue's lowest and highest ids, for its version now. */
const knownSpans = new WeakMap<
  CatalogueIndex,
  { version: string; span: Promise<{ first: number; last: number } | undefined> }
>();

function idSpan(catalogue: CatalogueIndex, version: string) {
  const known = knownSpans.get(catalogue);
  if (known?.version === version) return known.span;
  const end = async (direction: 'asc' | 'desc') =>
    (
      await catalogue.list({
        filters: {},
        sort: [{ field: 'id', direction }],
        page: 1,
        limit: 1,
        fields: ['id'],
      })
    ).items[0]?.id;
  const span = Promise.all([end('asc'), end('desc')]).then(([first, last]) =>
    first === undefined || last === undefined ? undefined : { first, last },
  );
  const entry = { version, span };
  knownSpans.set(catalogue, entry);
  // A failed read is not kept: the next request reads the span again.
  span.catch(() => {
    if (knownSpans.get(catalogue) === entry) knownSpans.delete(catalogue);
  });
  return span;
}

/**
 * The first match among the first {@link DAY_CANDIDATES} ids of the order of the catalogue's id
 * span that `seed` shuffles, or null when none of them matches (then the day's offset decides).
 * Each match is as likely as any other to be the first: the order is a uniform shuffle of the
 * span, whatever the matches' places in it.
 */
async function firstInDayOrder(
  catalogue: CatalogueIndex,
  filters: Filters,
  fields: readonly QuoteField[] | null,
  seed: string,
): Promise<QuoteProjection | null> {
  const { version } = await catalogue.info();
  const span = await idSpan(catalogue, version);
  if (span === undefined) return null;
  const next = distinctDrawer(span.last - span.first + 1, seededRandom(seed));
  const ids: number[] = [];
  while (ids.length < DAY_CANDIDATES) {
    const at = next();
    if (at === undefined) break;
    ids.push(span.first + at);
  }
  return catalogue.firstMatch(filters, ids, fields);
}

export interface TodayRouteOptions {
  catalogue: CatalogueIndex;
  /** Wall clock in milliseconds (tests move it across midnight). */
  now: () => number;
}

export async function todayRoutes(
  app: FastifyInstance,
  { catalogue, now }: TodayRouteOptions,
): Promise<void> {
  app.get('/quotes/today', { schema: todayQuoteSchema }, async (request, reply) => {
    const { filters, fields } = parseTodayQuery(readQuery(request.raw.url ?? ''));
    const at = now();
    const day = utcDay(at);
    const cacheControl = `public, max-age=${secondsUntilMidnight(at)}`;
    // The version is read before the data, as for every ETag: a swap in between can only make
    // the tag look stale.
    const { version } = await catalogue.info();
    const etag = etagFor(version, JSON.stringify(['today', day, filtersKey(filters), fields]));
    const quote = await quoteOfTheDay(catalogue, filters, fields, day);
    if (quote === null) throw notFound('No quote matches the given filters');
    const body = bodyBytes(reply.serialize(quote) as string);
    reply
      .header('etag', etag)
      .header('cache-control', cacheControl)
      .header('vary', varyAlso(reply.getHeader('vary'), VARY_ON_ACCESS))
      .type('application/json; charset=utf-8');
    if (ifNoneMatchHits(request.headers['if-none-match'], etag, true)) {
      // A HEAD is handed the 200's bytes so that its Content-Length is the 200's (see quotes.ts).
      return reply.code(304).send(request.method === 'HEAD' ? body : undefined);
    }
    return reply.send(body);
  });
}
