/**
 * `GET /quotes/facets`: for each requested facet, its values among the quotes matching the
 * filters, with exact counts. Cached and tagged like the list (ETag, 304, answers kept per
 * catalogue version), and under the quote paths' rate limit and authentication.
 */
import type { FastifyInstance } from 'fastify';
import { FACETS_PATH, facetsKey, parseFacetQuery } from '../facets-query.ts';
import { readQuery } from '../query.ts';
import { facetsSchema } from '../schemas.ts';
import { answer, type QuoteRoutesOptions } from './quotes.ts';

export async function facetRoutes(app: FastifyInstance, options: QuoteRoutesOptions): Promise<void> {
  const { catalogue } = options;
  app.get(FACETS_PATH, { schema: facetsSchema }, async (request, reply) => {
    const query = parseFacetQuery(readQuery(request.raw.url ?? ''));
    return answer(options, request, reply, facetsKey(query), async () => {
      const { total, facets } = await catalogue.facets(query);
      return { total_quotes: total, facets };
    });
  });
}
