/**
 * spike: the request mix at a baseline RATE, a sudden jump to SPIKE_RATE, and back: does the
 * service stay correct under the spike, and does its latency recover afterwards?
 *
 *   k6 run -e RATE=20 -e SPIKE_RATE=400 loadtest/spike.ts
 *
 * Phases: baseline (BASELINE, default 1m), surge (10 s ramp), spike (SPIKE_DURATION, default 1m),
 * drop (10 s), recovery (RECOVERY, default 2m). Thresholds (exit non-zero): errors and checks
 * over the whole run, p95/p99 of the baseline and recovery phases, p95 of the spike below
 * SPIKE_P95_MS. Recovery against baseline p95 is reported.
 */
import type { Options } from 'k6/options';
import { envDuration, envInt, envNumber, limits, resultsDir, TREND_STATS, target } from './lib/config.ts';
import { phasedMix } from './lib/load.ts';
import { k6Stages, type PhaseStage, totalSeconds } from './lib/phases.ts';
import { probeScenario } from './lib/probe.ts';
import { type SummaryData, stat, summaryOutputs } from './lib/summary.ts';

const TARGET = target();
const LIMITS = limits();
const RATE = envInt('RATE', 20);
const SPIKE_RATE = envInt('SPIKE_RATE', RATE * 10);
const BASELINE = envDuration('BASELINE', '1m');
const SPIKE = envDuration('SPIKE_DURATION', '1m');
const RECOVERY = envDuration('RECOVERY', '2m');
const SPIKE_P95_MS = envNumber('SPIKE_P95_MS', 1000);
const VUS = envInt('VUS', 50);
const MAX_VUS = envInt('MAX_VUS', Math.max(VUS, 500));
const SAMPLE_PAGES = envInt('SAMPLE_PAGES', 5);

const STAGES: PhaseStage[] = [
  { phase: 'baseline', seconds: BASELINE.seconds, target: RATE },
  { phase: 'surge', seconds: 10, target: SPIKE_RATE },
  { phase: 'spike', seconds: SPIKE.seconds, target: SPIKE_RATE },
  { phase: 'drop', seconds: 10, target: RATE },
  { phase: 'recovery', seconds: RECOVERY.seconds, target: RATE },
];

export const options: Options = {
  scenarios: {
    spike: {
      executor: 'ramping-arrival-rate',
      startRate: RATE,
      timeUnit: '1s',
      stages: k6Stages(STAGES),
      preAllocatedVUs: VUS,
      maxVUs: MAX_VUS,
    },
    memory: probeScenario(`${totalSeconds(STAGES)}s`),
  },
  thresholds: {
    'http_req_failed{scenario:spike}': [`rate<=${LIMITS.errorRate}`],
    'checks{scenario:spike}': [`rate>=${1 - LIMITS.errorRate}`],
    latency_baseline: [`p(95)<${LIMITS.p95Ms}`, `p(99)<${LIMITS.p99Ms}`],
    latency_recovery: [`p(95)<${LIMITS.p95Ms}`, `p(99)<${LIMITS.p99Ms}`],
    latency_spike: [`p(95)<${SPIKE_P95_MS}`],
  },
  summaryTrendStats: TREND_STATS,
};

const mix = phasedMix(TARGET, STAGES, ['baseline', 'spike', 'recovery'], SAMPLE_PAGES);
export const setup = mix.setup;
export default mix.iteration;
export const probe = mix.probe;

export function handleSummary(data: SummaryData): Record<string, string> {
  const p95 = (metric: string) => stat(data, metric, 'p(95)');
  const baseline = p95('latency_baseline');
  const recovery = p95('latency_recovery');
  const ms = (v: number | undefined) => (v === undefined ? 'n/a' : `${v.toFixed(2)} ms`);
  const rssMax = stat(data, 'service_rss_bytes', 'max');
  return summaryOutputs(data, {
    script: 'spike',
    title: `the request mix at ${RATE} req/s with a spike to ${SPIKE_RATE} req/s`,
    dir: resultsDir(),
    settings: {
      base_url: TARGET.baseUrl,
      auth: TARGET.auth,
      rates: `${RATE} → ${SPIKE_RATE} → ${RATE} req/s`,
      phases: `baseline ${BASELINE.text}, spike ${SPIKE.text}, recovery ${RECOVERY.text}`,
      limits: `p95 < ${LIMITS.p95Ms} ms outside the spike, < ${SPIKE_P95_MS} ms during it`,
    },
    findings: {
      'p95 baseline / spike / recovery': `${ms(baseline)} / ${ms(p95('latency_spike'))} / ${ms(recovery)}`,
      'recovery against baseline (p95)':
        baseline !== undefined && recovery !== undefined && baseline > 0
          ? (recovery / baseline).toFixed(2)
          : 'n/a',
      'dropped iterations (VUs exhausted)': String(stat(data, 'dropped_iterations', 'count') ?? 0),
      'service RSS max': rssMax === undefined ? 'not measured' : `${(rssMax / 1024 / 1024).toFixed(1)} MiB`,
    },
  });
}
