/**
 * `GET /authors`, `/authors/{id}`, `/works` and `/works/{id}`: authors and works as resources
 * (catalogue/authors.ts). Like the quote paths: rate limited, authenticated, 400 for a bad
 * parameter, 404 for nothing found or a page past the last, and ETags from the catalogue version.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { directoryKey, parseDirectoryId, parseDirectoryQuery } from '../authors-query.ts';
import type { DirectoryPage } from '../catalogue/authors.ts';
import { type CatalogueIndex, CatalogueUnavailableError, totalPages } from '../catalogue/port.ts';
import { notFound } from '../errors.ts';
import { MAX_PAGE, readQuery, shorten } from '../query.ts';
import { authorByIdSchema, listAuthorsSchema, listWorksSchema, workByIdSchema } from '../schemas.ts';
import { answer, type QuoteRoutesOptions } from './quotes.ts';

/** The catalogue's directory, or a 503 when its backend has none. */
function directoryOf(catalogue: CatalogueIndex) {
  if (catalogue.directory === undefined) {
    throw new CatalogueUnavailableError(`the ${catalogue.kind} backend serves no authors or works`);
  }
  return catalogue.directory();
}

/** A list answer: the page with only the asked fields, or the contract's 404s. */
function listAnswer<T extends object>(
  kind: 'authors' | 'works',
  page: DirectoryPage<T>,
  query: { page: number; limit: number },
  fields: readonly string[] | null,
): object {
  const noun = kind === 'authors' ? 'author' : 'work';
  if (page.total === 0) throw notFound(`No ${noun} has a quote matching the given filters`);
  const pages = totalPages(page.total, query.limit);
  if (query.page > pages || page.items.length === 0) {
    const asked = query.page > MAX_PAGE ? `above ${MAX_PAGE}` : String(query.page);
    throw notFound(
      `page ${asked} is past the last page; the last page is ${pages} (${page.total} ${kind}, ${query.limit} per page)`,
    );
  }
  const items =
    fields === null
      ? page.items
      : page.items.map((item) =>
          Object.fromEntries(fields.map((f) => [f, (item as Record<string, unknown>)[f]])),
        );
  return {
    items,
    pagination: { page: query.page, limit: query.limit, total_pages: pages, [`total_${kind}`]: page.total },
  };
}

export async function authorRoutes(app: FastifyInstance, options: QuoteRoutesOptions): Promise<void> {
  const { catalogue } = options;

  app.get('/authors', { schema: listAuthorsSchema }, async (request, reply) => {
    const parsed = parseDirectoryQuery('authors', readQuery(request.raw.url ?? ''));
    return answer(options, request, reply, directoryKey('authors', parsed), async () =>
      listAnswer('authors', await directoryOf(catalogue).authors(parsed.query), parsed.query, parsed.fields),
    );
  });

  app.get('/works', { schema: listWorksSchema }, async (request, reply) => {
    const parsed = parseDirectoryQuery('works', readQuery(request.raw.url ?? ''));
    return answer(options, request, reply, directoryKey('works', parsed), async () =>
      listAnswer('works', await directoryOf(catalogue).works(parsed.query), parsed.query, parsed.fields),
    );
  });

  // One handler for both details: they differ only in the entity they name.
  const detail =
    (kind: 'author' | 'work') =>
    async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      const id = parseDirectoryId(`${kind}s`, request.params.id, readQuery(request.raw.url ?? ''));
      if (id === null) throw notFound(`No ${kind} has id ${shorten(request.params.id)}`);
      return answer(options, request, reply, JSON.stringify([kind, id]), async () => {
        const found = await directoryOf(catalogue)[kind](id);
        if (found === null) throw notFound(`No ${kind} has id ${id}`);
        return found;
      });
    };
  app.get<{ Params: { id: string } }>('/authors/:id', { schema: authorByIdSchema }, detail('author'));
  app.get<{ Params: { id: string } }>('/works/:id', { schema: workByIdSchema }, detail('work'));
}
