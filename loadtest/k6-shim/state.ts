/** What the harness records while a script runs: metric samples (with tags) and checks. */

export type MetricType = 'counter' | 'gauge' | 'rate' | 'trend';

export interface Sample {
  value: number;
  tags: Record<string, string>;
}

export interface MetricRecord {
  type: MetricType;
  contains: 'default' | 'time' | 'data';
  samples: Sample[];
}

export interface CheckRecord {
  name: string;
  path: string;
  passes: number;
  fails: number;
}

export const metrics = new Map<string, MetricRecord>();
/** Checks by group path, in order of first use. */
export const checks = new Map<string, CheckRecord[]>();
export const groupStack: string[] = [];
export const context = { scenario: 'default', startTime: Date.now() };

export function declare(
  name: string,
  type: MetricType,
  contains: MetricRecord['contains'] = 'default',
): MetricRecord {
  let record = metrics.get(name);
  if (record === undefined) {
    record = { type, contains, samples: [] };
    metrics.set(name, record);
  }
  return record;
}

export function add(name: string, type: MetricType, value: number, tags: Record<string, string> = {}): void {
  declare(name, type).samples.push({ value, tags: { scenario: context.scenario, ...tags } });
}

export function groupPath(): string {
  return groupStack.length === 0 ? '' : `::${groupStack.join('::')}`;
}
