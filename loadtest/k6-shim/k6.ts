/** `k6`: check, group, sleep, fail (harness implementation, see register.ts). */
import { add, checks, groupPath, groupStack } from './state.ts';

type Checker<T> = (value: T) => boolean;

export function check<T>(
  value: T,
  sets: Record<string, Checker<T>>,
  tags: Record<string, string> = {},
): boolean {
  let all = true;
  const path = groupPath();
  const list = checks.get(path) ?? [];
  checks.set(path, list);
  for (const [name, fn] of Object.entries(sets)) {
    let ok = false;
    try {
      ok = Boolean(fn(value));
    } catch {
      ok = false;
    }
    let record = list.find((c) => c.name === name);
    if (record === undefined) {
      record = { name, path: `${path}::${name}`, passes: 0, fails: 0 };
      list.push(record);
    }
    if (ok) record.passes++;
    else record.fails++;
    add('checks', 'rate', ok ? 1 : 0, { check: name, ...tags });
    all &&= ok;
  }
  return all;
}

export function group<T>(name: string, fn: () => T): T {
  groupStack.push(name);
  try {
    return fn();
  } finally {
    groupStack.pop();
  }
}

const ticker = new Int32Array(new SharedArrayBuffer(4));

export function sleep(seconds: number): void {
  if (seconds > 0) Atomics.wait(ticker, 0, 0, seconds * 1000);
}

export function fail(message?: string): never {
  throw new Error(message ?? 'fail()');
}

export default { check, group, sleep, fail };
