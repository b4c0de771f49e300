/**
 * The benchmark's baseline: a bare Fastify server whose `GET /quotes` returns, byte for byte and
 * with the same content type, the body the service gave for `GET /quotes`. The service's
 * throughput divided by this one's is the cost of everything the service adds (auth, rate
 * limiting, validation, the catalogue query, serialisation, ETags) over Fastify itself.
 *
 *   PORT=4000 BODY_FILE=body.json CONTENT_TYPE='application/json; charset=utf-8' node loadtest/bench/bare.ts
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const port = Number(process.env.PORT);
const bodyFile = process.env.BODY_FILE;
if (!Number.isInteger(port) || port < 1 || bodyFile === undefined) {
  process.stderr.write('bare: PORT (a port number) and BODY_FILE are required\n');
  process.exit(2);
}
const body = readFileSync(bodyFile);
const contentType = process.env.CONTENT_TYPE ?? 'application/json; charset=utf-8';

const app = Fastify({ logger: false });
app.get('/quotes', (_request, reply) => {
  reply.header('content-type', contentType).send(body);
});
app.get('/health', (_request, reply) => {
  reply.send({ status: 'ok' });
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
await app.listen({ port, host: '127.0.0.1' });
