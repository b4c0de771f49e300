/**
 * Named phases of a ramping-arrival-rate scenario (soak, spike), so latency can be compared
 * between phases: early vs late for drift, baseline vs spike vs recovery for a spike.
 * Pure (no k6 module), so Node tests check it.
 */
/** One stage of the arrival rate, named by the phase it belongs to. */
export interface PhaseStage {
  phase: string;
  seconds: number;
  /** Iterations per second at the end of the stage. */
  target: number;
}

/** The stages as k6's `ramping-arrival-rate` takes them. */
export function k6Stages(stages: readonly PhaseStage[]): { duration: string; target: number }[] {
  return stages.map((s) => ({ duration: `${Math.max(1, Math.round(s.seconds))}s`, target: s.target }));
}

/** Total length of the stages, in seconds (as k6 rounds them). */
export function totalSeconds(stages: readonly PhaseStage[]): number {
  return stages.reduce((sum, s) => sum + Math.max(1, Math.round(s.seconds)), 0);
}

/** The phase at `elapsed` seconds from the scenario start, or undefined past the last stage. */
export function phaseAt(stages: readonly PhaseStage[], elapsed: number): string | undefined {
  let end = 0;
  for (const stage of stages) {
    end += Math.max(1, Math.round(stage.seconds));
    if (elapsed < end) return stage.phase;
  }
  return undefined;
}
