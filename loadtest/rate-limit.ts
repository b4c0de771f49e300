/**
 * rate-limit: the per-minute limit seen from one client (docs/api.md#rate-limiting).
 *
 * 1. Waits for a fresh window, using the service's own X-RateLimit-Reset (not the local clock).
 * 2. Sends LIMIT requests one after another: all 200, X-RateLimit-Limit = LIMIT and
 *    X-RateLimit-Remaining = LIMIT-1, LIMIT-2, …, 0.
 * 3. Request LIMIT+1 is 429 with the Error body (`too_many_requests`) and a Retry-After equal to
 *    the seconds left in the minute (compared with the local clock, within CLOCK_SKEW seconds).
 * 4. Requests keep getting 429 until shortly before Retry-After runs out, and succeed again
 *    (Remaining = LIMIT-1) once the next minute begins.
 *
 * Takes up to about two minutes. Nothing else may use the same client address meanwhile.
 *
 *   k6 run -e LIMIT=100 loadtest/rate-limit.ts
 */
import { check, fail, sleep } from 'k6';
import http from 'k6/http';
import { Gauge } from 'k6/metrics';
import type { Options } from 'k6/options';
import { get, guarded, header, isJsonType, json, type Response } from './lib/client.ts';
import { env, envInt, resultsDir, TREND_STATS, target } from './lib/config.ts';
import { isErrorBody } from './lib/shape.ts';
import { type SummaryData, stat, summaryOutputs } from './lib/summary.ts';

const TARGET = target();
const LIMIT = envInt('LIMIT', 100);
const CLOCK_SKEW = envInt('CLOCK_SKEW', 2, 0, 30);
// A cheap counted request: every quote path counts, whatever it costs.
const PATH = env('RATE_LIMIT_PATH', '/quotes?limit=1&fields=id');

export const options: Options = {
  scenarios: { rate_limit: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '5m' } },
  thresholds: { checks: ['rate==1'] },
  summaryTrendStats: TREND_STATS,
};

// 429 is the expected answer past the limit, not a failed request.
http.setResponseCallback(http.expectedStatuses(200, 429));

const retryAfterGauge = new Gauge('rate_limit_retry_after_s');
const clockDiffGauge = new Gauge('rate_limit_retry_after_vs_clock_s');
const burstGauge = new Gauge('rate_limit_burst_ms', true);

function intHeader(res: Response, name: string): number | undefined {
  const raw = header(res, name);
  return raw !== undefined && /^[0-9]+$/.test(raw.trim()) ? Number(raw) : undefined;
}

/** Seconds until the next UTC minute begins by the local clock, as the contract rounds them. */
function secondsLeftInMinute(nowMs: number): number {
  return Math.ceil((Math.floor(nowMs / 60000) * 60000 + 60000 - nowMs) / 1000);
}

function sleepUntil(ms: number): void {
  const wait = (ms - Date.now()) / 1000;
  if (wait > 0) sleep(wait);
}

export default function (): void {
  guarded('rate-limit', rateLimit);
}

function rateLimit(): void {
  const probe = get(TARGET, PATH, 'probe');
  if (probe.status !== 200 && probe.status !== 429) {
    fail(`GET ${PATH} answered ${probe.status}: check BASE_URL and the credentials`);
  }
  // X-RateLimit-Reset is the service's own count of seconds left in its window; one more second
  // lands safely inside the next window whatever the rounding and the clocks' offset.
  const left =
    intHeader(probe, 'x-ratelimit-reset') ??
    intHeader(probe, 'retry-after') ??
    secondsLeftInMinute(Date.now());
  console.log(`rate-limit: waiting ${left + 1} s for the next window, then sending ${LIMIT + 1} requests`);
  sleep(left + 1);

  const remaining: (number | undefined)[] = [];
  const statuses: number[] = [];
  let limitHeaderOk = true;
  const burstStart = Date.now();
  for (let i = 0; i < LIMIT; i++) {
    const res = get(TARGET, PATH, 'within-limit');
    statuses.push(res.status);
    remaining.push(intHeader(res, 'x-ratelimit-remaining'));
    if (intHeader(res, 'x-ratelimit-limit') !== LIMIT) limitHeaderOk = false;
  }
  burstGauge.add(Date.now() - burstStart);
  const firstWrong = remaining.findIndex((r, i) => r !== LIMIT - 1 - i);
  check(null, {
    [`the first ${LIMIT} requests of the minute are 200`]: () => statuses.every((s) => s === 200),
    [`X-RateLimit-Limit is ${LIMIT}`]: () => limitHeaderOk,
    [`X-RateLimit-Remaining counts down ${LIMIT - 1} … 0`]: () => firstWrong === -1,
  });
  if (firstWrong !== -1) {
    console.warn(
      `rate-limit: request ${firstWrong + 1} had X-RateLimit-Remaining ${remaining[firstWrong]}, ` +
        `expected ${LIMIT - 1 - firstWrong} (status ${statuses[firstWrong]})`,
    );
  }

  const over = get(TARGET, PATH, 'over-limit');
  const overAt = Date.now();
  const retryAfter = intHeader(over, 'retry-after');
  const expected = secondsLeftInMinute(overAt);
  if (retryAfter !== undefined) {
    retryAfterGauge.add(retryAfter);
    clockDiffGauge.add(retryAfter - expected);
  }
  check(over, {
    [`request ${LIMIT + 1} is 429`]: (r) => r.status === 429,
    '429 has the Error body too_many_requests': (r) =>
      isErrorBody(json(r), 429, 'too_many_requests') && isJsonType(r),
    '429 has X-RateLimit-Remaining 0': (r) => intHeader(r, 'x-ratelimit-remaining') === 0,
    'Retry-After is between 1 and 60': () => retryAfter !== undefined && retryAfter >= 1 && retryAfter <= 60,
    [`Retry-After is the seconds left in the minute (±${CLOCK_SKEW} s)`]: () =>
      retryAfter !== undefined && Math.abs(retryAfter - expected) <= CLOCK_SKEW,
  });
  if (retryAfter === undefined || over.status !== 429) {
    fail(`request ${LIMIT + 1} answered ${over.status} with Retry-After ${header(over, 'retry-after')}`);
  }

  const again = [get(TARGET, PATH, 'over-limit'), get(TARGET, PATH, 'over-limit')];
  // Two seconds before the window ends is still the same minute, whatever the rounding.
  if (retryAfter > 3) {
    sleepUntil(overAt + (retryAfter - 2) * 1000);
    again.push(get(TARGET, PATH, 'over-limit'));
  }
  check(again, {
    'requests keep getting 429 until the minute ends': (rs) => rs.every((r) => r.status === 429),
  });

  sleepUntil(overAt + (retryAfter + 1) * 1000);
  const next = get(TARGET, PATH, 'next-minute');
  check(next, {
    'requests succeed again once the next minute begins': (r) => r.status === 200,
    [`the new minute starts at X-RateLimit-Remaining ${LIMIT - 1}`]: (r) =>
      intHeader(r, 'x-ratelimit-remaining') === LIMIT - 1,
  });
}

export function handleSummary(data: SummaryData): Record<string, string> {
  const retryAfter = stat(data, 'rate_limit_retry_after_s', 'value');
  const diff = stat(data, 'rate_limit_retry_after_vs_clock_s', 'value');
  const burst = stat(data, 'rate_limit_burst_ms', 'value');
  return summaryOutputs(data, {
    script: 'rate-limit',
    title: `exactly ${LIMIT} requests per minute from one client, then 429 until the next minute`,
    dir: resultsDir(),
    settings: {
      base_url: TARGET.baseUrl,
      auth: TARGET.auth,
      limit: LIMIT,
      path: PATH,
      clock_skew: `${CLOCK_SKEW} s`,
    },
    findings: {
      'Retry-After on the first 429': retryAfter === undefined ? 'none' : `${retryAfter} s`,
      'Retry-After minus seconds left by the local clock': diff === undefined ? 'n/a' : `${diff} s`,
      [`time for ${LIMIT} requests`]: burst === undefined ? 'n/a' : `${burst} ms`,
    },
  });
}
