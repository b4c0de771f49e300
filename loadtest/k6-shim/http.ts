/**
 * `k6/http` (harness implementation, see register.ts): synchronous requests, as in k6, made by a
 * worker thread while this thread waits. Records http_reqs, http_req_duration, http_req_failed.
 */
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { add, declare } from './state.ts';

declare('http_req_duration', 'trend', 'time');

interface Params {
  headers?: Record<string, string>;
  tags?: Record<string, string>;
  responseCallback?: Expected;
}

interface Expected {
  statuses: (number | { min: number; max: number })[];
}

export interface Response {
  status: number;
  body: string;
  headers: Record<string, string>;
  timings: { duration: number };
  error: string;
  json(): unknown;
}

const flag = new Int32Array(new SharedArrayBuffer(4));
const { port1, port2 } = new MessageChannel();
const worker = new Worker(new URL('./http-worker.ts', import.meta.url), {
  workerData: { port: port2, flag },
  transferList: [port2],
});
worker.unref();
port1.unref();

let expected: Expected = { statuses: [{ min: 200, max: 399 }] };

/** Go's canonical header form, as k6 reports header names: x-ratelimit-limit → X-Ratelimit-Limit. */
function canonical(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

function isExpected(status: number, callback: Expected): boolean {
  return callback.statuses.some((s) =>
    typeof s === 'number' ? s === status : status >= s.min && status <= s.max,
  );
}

export function request(
  method: string,
  url: string,
  body: string | null = null,
  params: Params = {},
): Response {
  Atomics.store(flag, 0, 0);
  port1.postMessage({ method, url, headers: params.headers ?? {}, body });
  if (Atomics.wait(flag, 0, 0, 70_000) === 'timed-out') throw new Error(`harness: no answer from ${url}`);
  const reply = receiveMessageOnPort(port1)?.message as {
    status: number;
    headers: Record<string, string>;
    body: string;
    duration: number;
    error?: string;
  };
  const headers = Object.fromEntries(Object.entries(reply.headers).map(([k, v]) => [canonical(k), v]));
  const tags = { name: url, method, status: String(reply.status), ...(params.tags ?? {}) };
  add('http_reqs', 'counter', 1, tags);
  add('http_req_duration', 'trend', reply.duration, tags);
  add('http_req_failed', 'rate', isExpected(reply.status, params.responseCallback ?? expected) ? 0 : 1, tags);
  return {
    status: reply.status,
    body: method === 'HEAD' ? '' : reply.body,
    headers,
    timings: { duration: reply.duration },
    error: reply.error ?? '',
    json: () => JSON.parse(reply.body) as unknown,
  };
}

export const get = (url: string, params?: Params) => request('GET', url, null, params);
export const head = (url: string, params?: Params) => request('HEAD', url, null, params);
export const post = (url: string, body: string | null, params?: Params) => request('POST', url, body, params);

export function expectedStatuses(...statuses: Expected['statuses']): Expected {
  return { statuses };
}

export function setResponseCallback(callback: Expected): void {
  expected = callback;
}

export default { request, get, head, post, expectedStatuses, setResponseCallback };
