/**
 * An HTTP proxy in front of a real engine that holds each answer a while before passing it on,
 * counts the requests it has in flight and keeps what each asked: what the service's engine
 * reads look like when the engine is slow, and what they are, without a stand-in for the engine.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DelayingProxy {
  url: string;
  server: Server;
  /** Milliseconds each answer is held; change it at any time. */
  delay: { ms: number };
  /** Requests received and not yet answered, now and at most since the last reset. */
  inFlight: { now: number; most: number };
  /** Every request received, in order, with its body. */
  requests: { method: string; path: string; body: string }[];
  /**
   * Requests answered 503 by the proxy itself, as an engine that failed for a moment would:
   * those `refuse.when` picks (set it at any time), counted in `refuse.count`.
   */
  refuse: { when: (method: string, path: string) => boolean; count: number };
  /**
   * The engine's answers as a faulty engine or proxy would garble them: `tamper.with` is handed
   * each request and the engine's whole answer, and returns true when it has answered `res`
   * itself (or cut it short); false passes the answer on unchanged. Set it at any time.
   */
  tamper: {
    with: (request: { method: string; path: string }, answer: EngineAnswer, res: ServerResponse) => boolean;
  };
  close(): Promise<void>;
}

/** An answer of the engine, read whole. */
export interface EngineAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export async function delayingProxy(target: string): Promise<DelayingProxy> {
  const upstream = new URL(target);
  const delay = { ms: 0 };
  const inFlight = { now: 0, most: 0 };
  const requests: DelayingProxy['requests'] = [];
  const refuse: DelayingProxy['refuse'] = { when: () => false, count: 0 };
  const tamper: DelayingProxy['tamper'] = { with: () => false };
  const server = createServer((req, res) => {
    const seen = { method: req.method ?? '', path: req.url ?? '', body: '' };
    requests.push(seen);
    if (refuse.when(seen.method, seen.path)) {
      refuse.count++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'unavailable for a moment', code: 'internal', type: 'internal' }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.body = Buffer.concat(chunks).toString('utf8');
    });
    inFlight.now++;
    inFlight.most = Math.max(inFlight.most, inFlight.now);
    res.on('close', () => inFlight.now--);
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (part: Buffer) => parts.push(part));
        answer.on('error', () => res.destroy());
        answer.on('end', () => {
          const whole = {
            status: answer.statusCode ?? 502,
            headers: answer.headers,
            body: Buffer.concat(parts),
          };
          setTimeout(() => {
            if (res.destroyed || tamper.with(seen, whole, res)) return;
            res.writeHead(whole.status, whole.headers);
            res.end(whole.body);
          }, delay.ms);
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    delay,
    inFlight,
    requests,
    refuse,
    tamper,
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
