/**
 * `GET /api/v1/quotes`, the genre form of the original service (docs/api.md#the-genre-form): the
 * same catalogue query as `/quotes`, with its own parameters and envelope.
 */
import type { FastifyInstance } from 'fastify';
import { listKey, parseV1Query, readQuery } from '../query.ts';
import { v1QuotesSchema } from '../schemas.ts';
import { answer, listBody, type QuoteRoutesOptions } from './quotes.ts';

export async function v1Routes(app: FastifyInstance, options: QuoteRoutesOptions): Promise<void> {
  const { catalogue } = options;
  app.get('/api/v1/quotes', { schema: v1QuotesSchema }, async (request, reply) => {
    const query = parseV1Query(readQuery(request.raw.url ?? ''));
    return answer(options, request, reply, listKey('v1', query), () => listBody(catalogue, query, 'v1'));
  });
}
