import { describe, expect, it } from 'vitest';
import { cpuSecondsOf } from './processes.ts';

describe.skipIf(process.platform !== 'linux')('cpuSecondsOf', () => {
  it("reads a process's CPU time, which grows while it works", () => {
    const before = cpuSecondsOf(process.pid) as number;
    expect(before).toBeGreaterThan(0);
    // Works for 150 ms of this process's own CPU time, not of the wall clock: on a loaded machine
    // 150 ms of wall time can hold far less work.
    const started = process.cpuUsage();
    while (process.cpuUsage(started).user < 150_000) Math.sqrt(Math.random());
    // Clock ticks are 10 ms: 150 ms of work shows as at least 0.1 s more.
    expect(cpuSecondsOf(process.pid) as number).toBeGreaterThanOrEqual(before + 0.1);
  });

  it('is undefined for a process that does not exist', () => {
    expect(cpuSecondsOf(2 ** 22 + 1)).toBeUndefined();
  });
});
