/**
 * The least any service in front of Meilisearch can do: a bare Fastify server that forwards the
 * recorded engine requests with the service's own engine client and passes each answer back
 * untouched. No authentication, rate limiting, query parsing, check of the documents or answer
 * cache. `GET /r/<i>` forwards the i-th request of the file; measured in turns with the service
 * and the direct replay, it tells the cost of a hop in front of the engine (two more HTTP
 * exchanges per answer, on the same cores) from the cost of what the service does on it.
 *
 *   FORWARD_REQUESTS=<requests.json> MEILI_HOST=… MEILI_API_KEY=… PORT=… node loadtest/bench/forwarder.ts
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { type EngineRequest, engineHttp } from '../../service/catalogue/meilisearch/http.ts';
// How long the forwarder waits for the engine: as long as the service does by default.
import { DEFAULT_SEARCH_TIMEOUT_MS } from '../../service/catalogue/meilisearch/request.ts';
import type { RequestSpec } from './load.ts';

/** The paths that forward each of `count` recorded requests once, in order. */
export function forwarderPaths(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `/r/${i}`);
}

/** A recorded request as the engine client sends it: path and query parameters apart, the body parsed. */
interface Forwarded {
  method: 'GET' | 'POST';
  request: Omit<EngineRequest, 'deadline'>;
}

function toForwarded(spec: RequestSpec): Forwarded {
  if (spec.method !== 'GET' && spec.method !== 'POST') {
    throw new Error(`the forwarder sends GET and POST requests, not ${spec.method} ${spec.path}`);
  }
  const [path = '', query] = spec.path.replace(/^\//, '').split('?', 2);
  return {
    method: spec.method,
    request: {
      path,
      params: query === undefined ? undefined : Object.fromEntries(new URLSearchParams(query)),
      body: spec.body === undefined ? undefined : JSON.parse(spec.body),
    },
  };
}

/** The forwarder of `requests` to the engine at `host`, read with `apiKey`. */
export function forwarder(requests: readonly RequestSpec[], host: string, apiKey: string): FastifyInstance {
  const forwarded = requests.map(toForwarded);
  const http = engineHttp(host, apiKey);
  const app = Fastify({ logger: false });
  app.addHook('onClose', () => http.close());
  app.get<{ Params: { i: string } }>('/r/:i', async (request, reply) => {
    const one = forwarded[Number(request.params.i)];
    if (one === undefined) return reply.code(404).send({ error: `no request ${request.params.i}` });
    const call = { ...one.request, deadline: performance.now() + DEFAULT_SEARCH_TIMEOUT_MS };
    try {
      const body = one.method === 'GET' ? await http.getBytes(call) : await http.postBytes(call);
      return reply.type('application/json').send(body);
    } catch (error) {
      return reply.code(502).send({ error: (error as Error).message });
    }
  });
  app.get('/ready', async () => ({ ready: true }));
  return app;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const requests = JSON.parse(readFileSync(process.env.FORWARD_REQUESTS ?? '', 'utf8')) as RequestSpec[];
  const app = forwarder(requests, process.env.MEILI_HOST ?? '', process.env.MEILI_API_KEY ?? '');
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
  process.once('SIGTERM', () => void app.close());
}
