import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.ts';
import { k6Stages, phaseAt, totalSeconds } from './phases.ts';
import { residentBytes } from './prometheus.ts';

describe('parseDuration', () => {
  it('reads k6 durations in seconds', () => {
    expect(parseDuration('D', '90')).toBe(90);
    expect(parseDuration('D', '30s')).toBe(30);
    expect(parseDuration('D', '5m')).toBe(300);
    expect(parseDuration('D', '1h30m')).toBe(5400);
    expect(parseDuration('D', '1m30s')).toBe(90);
    expect(parseDuration('D', '500ms')).toBe(0.5);
  });
  it('names the variable when the value is not a duration', () => {
    expect(() => parseDuration('DURATION', '5 minutes')).toThrow(
      "DURATION must be a duration such as 30s, 5m or 1h30m, got '5 minutes'",
    );
    expect(() => parseDuration('DURATION', '')).toThrow(/DURATION/);
    expect(() => parseDuration('DURATION', '5m garbage')).toThrow(/DURATION/);
  });
});

describe('phases', () => {
  const stages = [
    { phase: 'baseline', seconds: 60, target: 10 },
    { phase: 'spike', seconds: 10.4, target: 100 },
    { phase: 'recovery', seconds: 120, target: 10 },
  ];
  it('names the phase at a time from the start, as k6 rounds the stages', () => {
    expect(phaseAt(stages, 0)).toBe('baseline');
    expect(phaseAt(stages, 59.9)).toBe('baseline');
    expect(phaseAt(stages, 60)).toBe('spike');
    expect(phaseAt(stages, 69.9)).toBe('spike');
    expect(phaseAt(stages, 70)).toBe('recovery');
    expect(phaseAt(stages, 190)).toBeUndefined();
    expect(totalSeconds(stages)).toBe(190);
    expect(k6Stages(stages)).toEqual([
      { duration: '60s', target: 10 },
      { duration: '10s', target: 100 },
      { duration: '120s', target: 10 },
    ]);
  });
});

describe('residentBytes', () => {
  it('reads process_resident_memory_bytes from a Prometheus exposition', () => {
    const text =
      '# HELP process_resident_memory_bytes RSS\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 123456789\nother 1\n';
    expect(residentBytes(text)).toBe(123456789);
    expect(residentBytes('process_resident_memory_bytes{pid="1"} 1.5e8\n')).toBe(150_000_000);
    expect(residentBytes('quotes_http_requests_total 3\n')).toBeUndefined();
  });
});
