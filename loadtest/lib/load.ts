/**
 * The iteration shared by the load scripts (throughput, soak, spike): one request of the mix,
 * checked, with its latency recorded per kind so the summary shows which kind is slow.
 */
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';
import { sampleVocabulary, sendMix } from './client.ts';
import type { Limits, Target } from './config.ts';
import { MIX_KINDS, type MixKind, nextRequest, type Vocabulary } from './mix.ts';
import { type PhaseStage, phaseAt } from './phases.ts';
import { probeMemory } from './probe.ts';

/** One latency trend per kind of the mix (`latency_<kind>`); create in the init context. */
export function kindTrends(): Record<MixKind, Trend> {
  const trends = {} as Record<MixKind, Trend>;
  for (const kind of MIX_KINDS) trends[kind] = new Trend(`latency_${kind}`, true);
  return trends;
}

/** Sends one request of the mix; its duration goes to its kind's trend and to `phase` if given. */
export function mixIteration(
  target: Target,
  vocab: Vocabulary,
  trends: Record<MixKind, Trend>,
  phase?: Trend,
): void {
  const request = nextRequest(vocab, Math.random);
  const res = sendMix(target, request);
  trends[request.kind].add(res.timings.duration);
  phase?.add(res.timings.duration);
}

/**
 * Thresholds every load script applies to the requests of `scenario` (so `setup()` sampling and
 * probes do not count): p95/p99 latency, failed requests, checks. k6 exits non-zero when one fails.
 */
export function loadThresholds(limits: Limits, scenario: string): Record<string, string[]> {
  return {
    [`http_req_duration{scenario:${scenario}}`]: [`p(95)<${limits.p95Ms}`, `p(99)<${limits.p99Ms}`],
    [`http_req_failed{scenario:${scenario}}`]: [`rate<=${limits.errorRate}`],
    [`checks{scenario:${scenario}}`]: [`rate>=${1 - limits.errorRate}`],
  };
}

/** The phase the current iteration runs in (VU code only: it reads the scenario's start time). */
export function currentPhase(stages: readonly PhaseStage[]): string | undefined {
  return phaseAt(stages, (Date.now() - exec.scenario.startTime) / 1000);
}

/** The functions a script exports to run the mix in phases: see {@link phasedMix}. */
export interface PhasedMix {
  setup(): Vocabulary;
  iteration(vocab: Vocabulary): void;
  probe(): void;
}

/**
 * A script that sends the mix through `stages`: `setup` samples `samplePages` pages of the
 * catalogue for filter values, each iteration's latency goes to its kind's trend and, in a phase
 * of `timed`, to `latency_<phase>` too, and `probe` reads the service's memory. Call it in the
 * init context (it creates the trends).
 */
export function phasedMix(
  target: Target,
  stages: readonly PhaseStage[],
  timed: readonly string[],
  samplePages: number,
): PhasedMix {
  const trends = kindTrends();
  const phases = new Map(timed.map((phase) => [phase, new Trend(`latency_${phase}`, true)]));
  return {
    setup: () => sampleVocabulary(target, samplePages),
    iteration: (vocab) => {
      const phase = currentPhase(stages);
      mixIteration(target, vocab, trends, phase === undefined ? undefined : phases.get(phase));
    },
    probe: () => probeMemory(target),
  };
}
