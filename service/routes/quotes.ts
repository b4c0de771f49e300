/**
 * `GET /quotes`, `/quotes/random` and `/quotes/{id}` (docs/api.md#listing-quotes and
 * #one-quote-and-a-random-one). Each handler parses the query (400), asks the catalogue, and
 * answers 404 for "nothing": by the time it runs, rate limiting and authentication have already
 * passed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apartFromRequest } from '../catalogue/budget.ts';
import { type CatalogueIndex, type ListQuery, type QuoteProjection, totalPages } from '../catalogue/port.ts';
import { notFound } from '../errors.ts';
import { type AnswerCache, bodyBytes, CACHEABLE, etagFor, ifNoneMatchHits, NO_STORE } from '../etag.ts';
import {
  listKey,
  MAX_PAGE,
  parseIdQuery,
  parseListQuery,
  parseRandomQuery,
  readQuery,
  shorten,
} from '../query.ts';
import { listQuotesSchema, quoteByIdSchema, randomQuoteSchema } from '../schemas.ts';

/** The body of a list answer, before the route wraps it. */
export interface Page {
  items: QuoteProjection[];
  pagination: { page: number; limit: number; total_pages: number; total_quotes: number };
}

/**
 * Runs a list query and applies the contract's "nothing" rules: no match is a 404, and so is a
 * page past the last, whose details name the last page.
 */
export async function listPage(catalogue: CatalogueIndex, query: ListQuery): Promise<Page> {
  const { items, total } = await catalogue.list(query);
  return { items, pagination: pagination(query, total, items.length) };
}

/** The pagination of a page holding `count` of `total` matches, or the contract's 404. */
function pagination(query: ListQuery, total: number, count: number): Page['pagination'] {
  if (total === 0) throw notFound('No quote matches the given filters');
  const pages = totalPages(total, query.limit);
  if (query.page > pages || count === 0) {
    // Pages above MAX_PAGE reach the backend as MAX_PAGE + 1 (see query.ts).
    const asked = query.page > MAX_PAGE ? `above ${MAX_PAGE}` : String(query.page);
    throw notFound(
      `page ${asked} is past the last page; the last page is ${pages} (${total} quotes, ${query.limit} per page)`,
    );
  }
  return { page: query.page, limit: query.limit, total_pages: pages, total_quotes: total };
}

/** The two envelopes of a list: `/quotes` and `/api/v1/quotes` (docs/api.md#listing-quotes, #the-genre-form). */
export type Envelope = 'quotes' | 'v1';

/**
 * The body of a list answer: the bytes the backend writes (`listJson`) in the envelope, when it
 * can; otherwise the page as objects, for the route's serialiser. Both give the same bytes.
 */
export async function listBody(
  catalogue: CatalogueIndex,
  query: ListQuery,
  envelope: Envelope,
): Promise<Buffer | object> {
  const wrap = (page: Page) =>
    envelope === 'quotes' ? page : { status_code: 200, data: page.items, pagination: page.pagination };
  if (catalogue.listJson === undefined) return wrap(await listPage(catalogue, query));
  // Property order of the QuotesResponse and V1Response schemas, as their serialisers write them.
  const written = await catalogue.listJson(query, {
    head: envelope === 'quotes' ? '{"items":' : '{"status_code":200,"data":',
    tail: (total, count) => {
      const p = pagination(query, total, count);
      return `,"pagination":{"page":${p.page},"limit":${p.limit},"total_pages":${p.total_pages},"total_quotes":${p.total_quotes}}}`;
    },
  });
  if (Buffer.isBuffer(written)) return written;
  // A page the backend could not write as bytes: the serialiser writes it.
  return wrap({ items: written.items, pagination: pagination(query, written.total, written.items.length) });
}

/** What the cacheable routes share: the catalogue and the answers already serialised. */
export interface QuoteRoutesOptions {
  catalogue: CatalogueIndex;
  answers: AnswerCache;
}

/**
 * Answers a cacheable request. The ETag is computed from the catalogue version read BEFORE the
 * data, so a catalogue swapped in between can only make the tag look stale (a later full
 * answer), never make stale data look fresh. An answer already serialised for the same version
 * and key (which also holds its tag) skips the query, and so answers a matching If-None-Match
 * at once.
 */
export async function answer(
  { catalogue, answers }: QuoteRoutesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  key: string,
  produce: () => Promise<unknown>,
): Promise<FastifyReply> {
  const { version } = await catalogue.info();
  const cached = answers.get(version, key);
  const etag = cached?.etag ?? etagFor(version, key);
  const condition = request.headers['if-none-match'];
  // Only an answer at hand proves that the request has a 200 to be "not modified". Anyone can
  // compute the tag of a request (the version is public, the key is the canonical request), so a
  // tag sent for a request that matches nothing must still get its 404: without the answer, the
  // query runs first.
  if (cached !== undefined && ifNoneMatchHits(condition, etag, true)) {
    return notModified(reply, etag, cached.body);
  }
  let body = cached?.body;
  if (body === undefined) {
    const produced = await produce();
    // Bytes are a body already written (listBody); an object goes through the route's compiled
    // response serialiser, exactly as Fastify would apply it.
    const written = Buffer.isBuffer(produced) ? produced : bodyBytes(reply.serialize(produced) as string);
    body = written;
    // Kept only for a request asked before, and only if the catalogue did not change meanwhile
    // (an answer stored under a version must be that version's answer). The answer does not
    // wait for that check: the version may have to be read from the engine again, which could
    // hold an answer already read for up to MEILI_TIMEOUT_MS more, or turn it into a 503. Nor
    // does it take the request's time (catalogue/budget.ts), which may be spent by now. A
    // request asked once, as most of a stream of distinct ones are, skips the check.
    if (answers.askedAgain(key)) {
      apartFromRequest(() => catalogue.info()).then(
        (now) => {
          if (now.version === version) answers.set(version, key, { etag, body: written });
        },
        () => {},
      );
    }
  }
  if (ifNoneMatchHits(condition, etag, true)) return notModified(reply, etag, body);
  return reply
    .header('etag', etag)
    .header('cache-control', CACHEABLE)
    .type('application/json; charset=utf-8')
    .send(body);
}

/**
 * No body, but the content-type of the representation it stands for, like every other response.
 * A HEAD is handed the 200's bytes: Fastify's HEAD handling drops them and sets Content-Length
 * from them, where it would otherwise send `Content-Length: 0`, which RFC 9110 (8.6) forbids on
 * a 304 whose 200 has a body.
 */
function notModified(reply: FastifyReply, etag: string, body: Buffer | undefined): FastifyReply {
  return reply
    .code(304)
    .header('etag', etag)
    .header('cache-control', CACHEABLE)
    .type('application/json; charset=utf-8')
    .send(reply.request.method === 'HEAD' ? body : undefined);
}

/**
 * `GET /quotes` without parameters, the most frequent request, parsed once: its query and key
 * never change. Frozen, as every request shares it.
 */
const PLAIN_LIST: { readonly query: ListQuery; readonly key: string } = (() => {
  const query = parseListQuery(new Map());
  Object.freeze(query.filters);
  Object.freeze(query.sort);
  return Object.freeze({ query: Object.freeze(query), key: listKey('quotes', query) });
})();

export async function quoteRoutes(app: FastifyInstance, options: QuoteRoutesOptions): Promise<void> {
  const { catalogue } = options;
  app.get('/quotes', { schema: listQuotesSchema }, async (request, reply) => {
    const url = request.raw.url ?? '';
    let query = PLAIN_LIST.query;
    let key = PLAIN_LIST.key;
    // Without a `?` there is no parameter at all (a fragment is never part of the query).
    if (url.includes('?')) {
      query = parseListQuery(readQuery(url));
      key = listKey('quotes', query);
    }
    return answer(options, request, reply, key, () => listBody(catalogue, query, 'quotes'));
  });

  app.get('/quotes/random', { schema: randomQuoteSchema }, async (request, reply) => {
    const { filters, fields, count } = parseRandomQuery(readQuery(request.raw.url ?? ''));
    reply.header('cache-control', NO_STORE);
    if (count !== undefined) {
      // With count the answer is always an array, even of one; none matching is the same 404
      // as a single random quote's.
      const quotes = await catalogue.randomSample(filters, fields, count);
      if (quotes.length === 0) throw notFound('No quote matches the given filters');
      return quotes;
    }
    const quote = await catalogue.random(filters, fields);
    if (quote === null) throw notFound('No quote matches the given filters');
    return quote;
  });

  app.get<{ Params: { id: string } }>('/quotes/:id', { schema: quoteByIdSchema }, async (request, reply) => {
    const { id, fields } = parseIdQuery(request.params.id, readQuery(request.raw.url ?? ''));
    if (id === null) throw notFound(`No quote has id ${shorten(request.params.id)}`);
    return answer(options, request, reply, JSON.stringify(['id', id, fields]), async () => {
      const quote =
        catalogue.getJson === undefined
          ? await catalogue.get(id, fields)
          : await catalogue.getJson(id, fields);
      if (quote === null) throw notFound(`No quote has id ${id}`);
      return quote;
    });
  });
}
