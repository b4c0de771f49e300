/**
 * What Node's HTTP server answers on its own, with an empty body or not at all, made to answer
 * in the contract's words (every response is JSON, docs/api.md#paths). Fastify still
 * creates the server: a wrapper around its request handler would cost every request a call.
 *
 * - an HTTP/1.1 request without `Host`: Node answers 400 with no body; the service has one host,
 *   so it serves the request, as it would over HTTP/1.0;
 * - `Expect:` other than `100-continue`: Node answers 417 (a status the contract does not have)
 *   with no body; RFC 9110 lets a server ignore an expectation it does not know, so the request
 *   is served like any other;
 * - `CONNECT`: Node closes the connection without a word; here 405 on a known path, else 404;
 * - a method token Node's parser does not know (`FOO /quotes`): the parser rejects the request
 *   line; {@link unknownMethodAnswer} gives it the 405 or 404 the method would get if it parsed.
 * - a client that closes its sending side once its request is out (a half-close): Node drops
 *   every request of that connection not answered yet, without a word. An answer computed in
 *   the same tick (the embedded engine) escaped it; one that waits for a remote engine
 *   (Meilisearch) was lost. The answer is now sent, then the connection closed.
 *
 * CONNECT and unknown methods never reach Fastify, so no hook runs for them: they are neither
 * counted by the rate limiter nor authenticated, unlike a 405 to a method Node knows (`DELETE`),
 * which is counted as the contract says. Counting them would need the rate-limit store on a raw
 * socket; they get no work done and close their connection, and no credentials are read.
 */
import { type IncomingMessage, type Server, type ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type ApiError, methodNotAllowed } from './errors.ts';
import { shownPath, unknownPath } from './routes/fallback.ts';

/**
 * Request line and headers, in bytes. Node's default (16 KiB) is below the longest query string
 * the service accepts (query.ts), which would then be refused without naming the query.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/** A whole request, headers included, must arrive within this (Fastify's `requestTimeout`). */
export const REQUEST_TIMEOUT_MS = 15_000;

/**
 * Every answer's `X-Content-Type-Options`: browsers must not guess another type than the JSON,
 * HTML or script each answer declares.
 */
export const NO_SNIFF = { name: 'X-Content-Type-Options', value: 'nosniff' } as const;

/**
 * Node's response with {@link NO_SNIFF} set from the start: every answer the server writes
 * carries it (routes, errors, the docs' files, Node's own paths into Fastify), without a hook
 * run per request. Answers written on a raw socket add it themselves ({@link rawResponse}).
 */
class NoSniffResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  // Rest parameters: whatever else Node passes (its response options) goes through unchanged.
  constructor(...args: [request: Request]) {
    super(...args);
    this.setHeader(NO_SNIFF.name, NO_SNIFF.value);
  }
}

/**
 * Fastify's `http` option: what Node's server is created with. Node enforces the request and
 * headers timeouts only when it checks its connections, every 30 s by default: a slow client was
 * cut after 15 to 45 s. Checked every second, the bound is what it says; the headers get no
 * longer than the whole request (Node's default for them is 60 s).
 */
export const HTTP_OPTIONS: ServerOptions = {
  requireHostHeader: false,
  maxHeaderSize: MAX_HEADER_BYTES,
  headersTimeout: REQUEST_TIMEOUT_MS,
  connectionsCheckingInterval: 1_000,
  ServerResponse: NoSniffResponse,
};

/** Whether a path (without query) is one the service serves with GET. */
export type KnownPath = (path: string) => boolean;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Told of every answer written on a raw socket: the method (`OTHER` when unknown) and status. */
export type RawAnswerListener = (method: string, status: number) => void;

/**
 * Answers unknown expectations and CONNECT on the server Fastify created; `route` is Fastify's
 * own request handler (`app.routing`), `onAnswer` hears of each CONNECT answered.
 */
export function answerWhatNodeWouldNot(
  server: Server,
  route: Handler,
  knownPath: KnownPath,
  onAnswer: RawAnswerListener,
): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('checkExpectation', route);
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const answer = methodAnswer('CONNECT', request.url ?? '', knownPath);
    onAnswer('CONNECT', answer.statusCode);
    socket.end(rawResponse(answer));
  });
}

/**
 * The answer to a request whose method Node's parser rejected (`HPE_INVALID_METHOD`), read from
 * the bytes it received (`rawPacket`, where the parser stopped at `bytesParsed`); undefined when
 * they do not hold a request line (then it is simply not valid HTTP).
 */
export function unknownMethodAnswer(
  rawPacket: unknown,
  bytesParsed: unknown,
  knownPath: KnownPath,
): ApiError | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  // The packet may begin with requests pipelined before this one: the parser stopped inside the
  // method, so the request line starts after the last line break before that point.
  const stop = typeof bytesParsed === 'number' ? Math.min(Math.max(bytesParsed, 0), rawPacket.length) : 0;
  const start = stop === 0 ? 0 : rawPacket.lastIndexOf(0x0a, stop - 1) + 1;
  // The bytes are already bounded by the header limit: the request line is within them.
  const line = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}) (\S+) HTTP\/1\.[01]\r?\n/.exec(
    rawPacket.toString('latin1', start, Math.min(rawPacket.length, start + MAX_HEADER_BYTES)),
  );
  if (line === null) return undefined;
  return methodAnswer(line[1] as string, line[2] as string, knownPath);
}

/** 405 for a method other than GET/HEAD on a known path, 404 elsewhere. */
function methodAnswer(method: string, target: string, knownPath: KnownPath): ApiError {
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  if (path.startsWith('/') && knownPath(path)) {
    return methodNotAllowed(method, shownPath(path));
  }
  return unknownPath(path);
}

/** Sockets whose parse error is being answered: a later error or timeout of theirs is not answered again. */
const answering = new WeakSet<Socket>();

/**
 * Answers a parse error on a socket once the requests parsed before the bad bytes have had their
 * answers. A client may pipeline a valid request and a malformed one in the same packet: Node's
 * parser emits the first, then reports the error at once, while the first one's answer is still
 * being made. Node keeps the answer owning the socket in `_httpMessage` (the one its own error
 * handler looks at) and hands the socket to the next queued answer when one finishes; `write`
 * runs when none is left, then the connection is closed. Reading stops meanwhile, and an answer
 * that never finishes is cut after {@link REQUEST_TIMEOUT_MS}. Answers nothing (returns false)
 * when the socket is already being answered.
 */
export function answerAfterInFlight(socket: Socket, error: Error, write: () => void): boolean {
  if (answering.has(socket)) return false;
  answering.add(socket);
  const finish = () => {
    if (socket.writable) write();
    socket.destroy(error);
  };
  if (inFlight(socket) === undefined) {
    finish();
    return true;
  }
  socket.pause();
  const cut = setTimeout(() => socket.destroy(), REQUEST_TIMEOUT_MS);
  cut.unref();
  socket.once('close', () => clearTimeout(cut));
  const next = () => {
    // Node's own 'finish' listener ran first: the socket now belongs to the next answer, if any.
    const response = inFlight(socket);
    if (response !== undefined) {
      response.once('finish', next);
      return;
    }
    clearTimeout(cut);
    finish();
  };
  next();
  return true;
}

function inFlight(socket: Socket): ServerResponse | undefined {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
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
    `Cache-Control: no-store\r\n${NO_SNIFF.name}: ${NO_SNIFF.value}\r\n${headers}Connection: close\r\n\r\n${body}`
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
};
