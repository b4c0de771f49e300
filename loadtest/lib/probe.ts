/**
 * Service memory during long runs, read from its Prometheus metrics (METRICS_PATH, default
 * `/metrics`): `process_resident_memory_bytes`, the conventional name of a process's RSS.
 * Runs as its own one-VU scenario so that probes never count against the load's thresholds.
 */
import { sleep } from 'k6';
import http from 'k6/http';
import { Gauge, Trend } from 'k6/metrics';
import { bodyText } from './client.ts';
import { env, type Target } from './config.ts';
import { residentBytes } from './prometheus.ts';

/** RSS samples (bytes) over the run: min, max and average appear in the summary. */
const rss = new Trend('service_rss_bytes');
/** Growth of RSS since the first sample of the run, in bytes: the memory drift. */
const growth = new Gauge('service_rss_growth_bytes');

// Per VU: the probe scenario has exactly one VU, so this is the run's first sample.
let firstRss: number | undefined;

/** The probe scenario: one VU, one sample every PROBE_INTERVAL seconds, for `duration`. */
export function probeScenario(duration: string): {
  executor: 'constant-vus';
  vus: number;
  duration: string;
  exec: string;
} {
  return { executor: 'constant-vus', vus: 1, duration, exec: 'probe' };
}

/**
 * One sample. Metrics endpoints are often internal-only: when it does not answer 200 with the
 * metric, nothing is recorded and the summary says memory was not measured.
 */
export function probeMemory(target: Target): void {
  const path = env('METRICS_PATH', '/metrics');
  const res = http.get(`${target.baseUrl}${path}`, {
    headers: target.headers,
    tags: { name: 'metrics' },
    responseCallback: http.expectedStatuses(200, 401, 403, 404),
  });
  const bytes = res.status === 200 ? residentBytes(bodyText(res)) : undefined;
  if (bytes !== undefined) {
    if (firstRss === undefined) firstRss = bytes;
    rss.add(bytes);
    growth.add(bytes - firstRss);
  }
  sleep(Number(env('PROBE_INTERVAL', '10')));
}
