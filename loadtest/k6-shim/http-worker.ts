/** The harness's HTTP client thread: the main thread blocks on `flag` while this one fetches. */
import { type MessagePort, workerData } from 'node:worker_threads';

interface Job {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
}

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };

port.on('message', async (job: Job) => {
  const began = performance.now();
  let reply: object;
  try {
    const res = await fetch(job.url, {
      method: job.method,
      headers: job.headers,
      body: job.body ?? undefined,
      redirect: 'manual',
      signal: AbortSignal.timeout(60_000),
    });
    const body = await res.text();
    reply = {
      status: res.status,
      headers: Object.fromEntries(res.headers.entries()),
      body,
      duration: performance.now() - began,
    };
  } catch (error) {
    reply = { status: 0, headers: {}, body: '', duration: performance.now() - began, error: String(error) };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
