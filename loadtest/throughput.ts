/**
 * throughput: a constant arrival rate of the realistic mix (default list, filters, `_like`,
 * multi-key sorts, deep pages, by id, random, v1) for DURATION, with thresholds on p95/p99
 * latency, failed requests and checks. k6 exits non-zero when a threshold fails.
 *
 *   k6 run -e RATE=200 -e DURATION=2m loadtest/throughput.ts
 *
 * The service must allow this rate from one client: start it with a RATE_LIMIT_MAX above
 * RATE × 60, or every request past the limit fails as a 429.
 */
import type { Options } from 'k6/options';
import { sampleVocabulary } from './lib/client.ts';
import { envDuration, envInt, limits, resultsDir, TREND_STATS, target } from './lib/config.ts';
import { kindTrends, loadThresholds, mixIteration } from './lib/load.ts';
import { MIX_WEIGHTS, type Vocabulary } from './lib/mix.ts';
import { type SummaryData, summaryOutputs } from './lib/summary.ts';

const TARGET = target();
const LIMITS = limits();
const RATE = envInt('RATE', 50);
const DURATION = envDuration('DURATION', '1m');
const VUS = envInt('VUS', 20);
const MAX_VUS = envInt('MAX_VUS', Math.max(VUS, 200));
const SAMPLE_PAGES = envInt('SAMPLE_PAGES', 5);
// Iterations k6 could not start because every VU was busy: the rate was not sustained.
const MAX_DROPPED = Math.floor(RATE * DURATION.seconds * LIMITS.errorRate);

export const options: Options = {
  scenarios: {
    throughput: {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: DURATION.text,
      preAllocatedVUs: VUS,
      maxVUs: MAX_VUS,
    },
  },
  thresholds: { ...loadThresholds(LIMITS, 'throughput'), dropped_iterations: [`count<=${MAX_DROPPED}`] },
  summaryTrendStats: TREND_STATS,
};

const trends = kindTrends();

export function setup(): Vocabulary {
  return sampleVocabulary(TARGET, SAMPLE_PAGES);
}

export default function (vocab: Vocabulary): void {
  mixIteration(TARGET, vocab, trends);
}

export function handleSummary(data: SummaryData): Record<string, string> {
  return summaryOutputs(data, {
    script: 'throughput',
    title: `constant arrival rate of the request mix for ${DURATION.text}`,
    dir: resultsDir(),
    settings: {
      base_url: TARGET.baseUrl,
      auth: TARGET.auth,
      rate: `${RATE} req/s`,
      duration: DURATION.text,
      vus: `${VUS} pre-allocated, ${MAX_VUS} max`,
      limits: `p95 < ${LIMITS.p95Ms} ms, p99 < ${LIMITS.p99Ms} ms, errors ≤ ${LIMITS.errorRate * 100}%`,
      mix: Object.entries(MIX_WEIGHTS)
        .map(([kind, weight]) => `${kind} ${weight}%`)
        .join(', '),
    },
  });
}
