/**
 * The HTTP server under Fastify, made to answer in the contract's words where Node would answer
 * on its own: with an empty body, or not at all. Every response is JSON (api-contract.md
 * section 1), including these:
 *
 * - an HTTP/1.1 request without `Host`: Node answers 400 with no body; here the Error object;
 * - `Expect:` other than `100-continue`: Node answers 417 (a status the contract does not have)
 *   with no body; RFC 9110 lets a server ignore an expectation it does not know, so the request
 *   is served like any other;
 * - `CONNECT`: Node closes the connection without a word; here 405 on a known path, else 404;
 * - a method token Node's parser does not know (`FOO /quotes`): the parser rejects the request
 *   line; {@link unknownMethodAnswer} gives it the 405 or 404 the method would get if it parsed.
 *
 * None of these requests reach Fastify, so no hook runs for them: they are neither counted by
 * the rate limiter nor authenticated, like the 405s Fastify answers for methods it knows.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ApiError, badRequest, methodNotAllowed, notFound } from './errors.ts';

/** Timeouts Fastify sets on a server it creates itself, and must be set here instead. */
export interface ServerTimeouts {
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
}

/**
 * Request line and headers, in bytes. Node's default (16 KiB) is below the longest query string
 * the service accepts (query.ts), which would then be refused without naming the query.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/** Whether a path (without query) is one the service serves with GET. */
export type KnownPath = (path: string) => boolean;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Fastify's `serverFactory`. `knownPath` is asked only for CONNECT requests, so it may look up
 * routes that are declared after the server is made.
 */
export function jsonHttpServer(timeouts: ServerTimeouts, knownPath: KnownPath) {
  return (handler: Handler): Server => {
    const serve: Handler = (request, response) => {
      if (request.headers.host === undefined && request.httpVersion === '1.1') {
        writeError(response, badRequest('the request has no Host header, which HTTP/1.1 requires'));
        return;
      }
      handler(request, response);
    };
    const server = createServer({ requireHostHeader: false, maxHeaderSize: MAX_HEADER_BYTES }, serve);
    server.on('checkExpectation', serve);
    server.on('connect', (request: IncomingMessage, socket: Duplex) => {
      socket.on('error', () => socket.destroy());
      socket.end(rawResponse(methodAnswer('CONNECT', request.url ?? '', knownPath)));
    });
    server.keepAliveTimeout = timeouts.keepAliveTimeout;
    server.requestTimeout = timeouts.requestTimeout;
    server.setTimeout(timeouts.connectionTimeout);
    return server;
  };
}

/**
 * The answer to a request whose method Node's parser rejected (`HPE_INVALID_METHOD`), read from
 * the bytes it received; undefined when they do not hold a request line (then it is simply not
 * valid HTTP).
 */
export function unknownMethodAnswer(rawPacket: unknown, knownPath: KnownPath): string | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  const line = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}) (\S{1,16384}) HTTP\/1\.[01]\r?\n/.exec(
    rawPacket.toString('latin1', 0, Math.min(rawPacket.length, 17_000)),
  );
  if (line === null) return undefined;
  return rawResponse(methodAnswer(line[1] as string, line[2] as string, knownPath));
}

/** 405 for a method other than GET/HEAD on a known path, 404 elsewhere. */
function methodAnswer(method: string, target: string, knownPath: KnownPath): ApiError {
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
  if (path.startsWith('/') && knownPath(path)) return methodNotAllowed(method, shown);
  return notFound(`No resource at ${shown}`);
}

/** A complete HTTP/1.1 response that closes the connection, for sockets Node gave up on. */
export function rawResponse(error: ApiError): string {
  const body = JSON.stringify(error.toBody());
  const headers = Object.entries(error.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${error.statusCode} ${STATUS_TEXT[error.statusCode] ?? 'Error'}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Cache-Control: no-store\r\n${headers}Connection: close\r\n\r\n${body}`
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
};

function writeError(response: ServerResponse, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  response.writeHead(error.statusCode, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    connection: 'close',
    ...error.headers,
  });
  response.end(body);
}
