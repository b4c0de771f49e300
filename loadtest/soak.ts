/**
 * soak: the request mix at a steady RATE for a long DURATION (after a RAMP), watching for drift:
 * latency in the last quarter of the hold against the first quarter, and the service's memory
 * (RSS from its metrics endpoint) growing over the run.
 *
 *   k6 run -e RATE=50 -e DURATION=30m loadtest/soak.ts
 *
 * Thresholds (exit non-zero): p95/p99 latency, errors and checks over the whole run; p95 of the
 * last quarter; with MAX_RSS_GROWTH_MB set, RSS growth. The late/early latency ratio is reported.
 */

import type { Options } from 'k6/options';
import { envDuration, envInt, envNumber, limits, resultsDir, TREND_STATS, target } from './lib/config.ts';
import { loadThresholds, phasedMix } from './lib/load.ts';
import { k6Stages, type PhaseStage, totalSeconds } from './lib/phases.ts';
import { probeScenario } from './lib/probe.ts';
import { type SummaryData, stat, summaryOutputs } from './lib/summary.ts';

const TARGET = target();
const LIMITS = limits();
const RATE = envInt('RATE', 20);
const RAMP = envDuration('RAMP', '1m');
const HOLD = envDuration('DURATION', '30m');
const VUS = envInt('VUS', 20);
const MAX_VUS = envInt('MAX_VUS', Math.max(VUS, 200));
const SAMPLE_PAGES = envInt('SAMPLE_PAGES', 5);
const MAX_DRIFT = envNumber('MAX_DRIFT', 1.5);
const MAX_RSS_GROWTH_MB = envNumber('MAX_RSS_GROWTH_MB', 0);

// The hold is split in quarters so that its first and last quarter can be compared.
const STAGES: PhaseStage[] = [
  { phase: 'ramp', seconds: RAMP.seconds, target: RATE },
  { phase: 'early', seconds: HOLD.seconds / 4, target: RATE },
  { phase: 'middle', seconds: HOLD.seconds / 2, target: RATE },
  { phase: 'late', seconds: HOLD.seconds / 4, target: RATE },
];
const TOTAL = totalSeconds(STAGES);

const thresholds: Record<string, string[]> = {
  ...loadThresholds(LIMITS, 'soak'),
  latency_late: [`p(95)<${LIMITS.p95Ms}`],
};
if (MAX_RSS_GROWTH_MB > 0) thresholds.service_rss_growth_bytes = [`value<${MAX_RSS_GROWTH_MB * 1024 * 1024}`];

export const options: Options = {
  scenarios: {
    soak: {
      executor: 'ramping-arrival-rate',
      startRate: 1,
      timeUnit: '1s',
      stages: k6Stages(STAGES),
      preAllocatedVUs: VUS,
      maxVUs: MAX_VUS,
    },
    memory: probeScenario(`${TOTAL}s`),
  },
  thresholds,
  summaryTrendStats: TREND_STATS,
};

const mix = phasedMix(TARGET, STAGES, ['early', 'late'], SAMPLE_PAGES);
export const setup = mix.setup;
export default mix.iteration;
export const probe = mix.probe;

function ms(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${value.toFixed(2)} ms`;
}

function mib(bytes: number | undefined): string {
  return bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function handleSummary(data: SummaryData): Record<string, string> {
  const early = stat(data, 'latency_early', 'p(95)');
  const late = stat(data, 'latency_late', 'p(95)');
  const drift = early !== undefined && late !== undefined && early > 0 ? late / early : undefined;
  const rssMax = stat(data, 'service_rss_bytes', 'max');
  return summaryOutputs(data, {
    script: 'soak',
    title: `the request mix at ${RATE} req/s for ${HOLD.text}: latency and memory drift`,
    dir: resultsDir(),
    settings: {
      base_url: TARGET.baseUrl,
      auth: TARGET.auth,
      rate: `${RATE} req/s`,
      ramp: RAMP.text,
      hold: HOLD.text,
      limits: `p95 < ${LIMITS.p95Ms} ms, p99 < ${LIMITS.p99Ms} ms, errors ≤ ${LIMITS.errorRate * 100}%`,
    },
    findings: {
      'p95 first quarter → last quarter': `${ms(early)} → ${ms(late)}`,
      'latency drift (late/early p95)':
        drift === undefined
          ? 'n/a'
          : `${drift.toFixed(2)} (${drift <= MAX_DRIFT ? 'within' : 'ABOVE'} ${MAX_DRIFT})`,
      'service RSS min → max':
        rssMax === undefined
          ? 'not measured (no process_resident_memory_bytes at METRICS_PATH)'
          : `${mib(stat(data, 'service_rss_bytes', 'min'))} → ${mib(rssMax)}`,
      'service RSS growth':
        rssMax === undefined ? 'n/a' : mib(stat(data, 'service_rss_growth_bytes', 'value')),
    },
  });
}
