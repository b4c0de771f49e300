/**
 * What a suite needs from the machine, and the lines it prints about it.
 *
 * A suite whose server is absent skips with one line naming what would run it; a suite that
 * found its server says which one. Both lines carry a fixed tag and the suite's file, so the
 * run's summary (summary-reporter.ts) can list, per file, what ran on what and what skipped.
 */
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Requirement = { available: true; detail: string } | { available: false; reason: string };

export const SKIP_TAG = '[skip]';
export const USING_TAG = '[using]';

/** The suite's file relative to the project, from its `import.meta.url`. */
export function suiteName(moduleUrl: string): string {
  return relative(process.cwd(), fileURLToPath(moduleUrl));
}

/**
 * Prints the one line that says a suite (or a part of it) skips, and why. `suite` is the suite's
 * `import.meta.url` or a name of its own; the reason comes back for `describe.skip` titles.
 */
export function announceSkip(suite: string, reason: string): string {
  console.warn(`${SKIP_TAG} ${suite.startsWith('file:') ? suiteName(suite) : suite}: ${reason}`);
  return reason;
}

/** Prints the one line that says which server a suite runs against. */
export function announceUsing(moduleUrl: string, detail: string): void {
  console.warn(`${USING_TAG} ${suiteName(moduleUrl)}: ${detail}`);
}

let redis: Requirement | undefined;

/**
 * Whether a `redis-server` binary can be started here (REDIS_SERVER_BIN, else PATH). Asked once per
 * process: the binary does not come and go during a run.
 */
export function redisServerRequirement(): Requirement {
  redis ??= (() => {
    const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 5000 });
    if (probe.status === 0) {
      const version = /v=(\S+)/.exec(probe.stdout)?.[1] ?? 'unknown version';
      return { available: true, detail: `redis-server ${version}` };
    }
    return {
      available: false,
      reason: `'${binary}' not found: install Redis (apt-get install -y redis-server) or set REDIS_SERVER_BIN`,
    };
  })();
  return redis;
}

/**
 * For a suite that needs a real redis-server: announces what it uses or why it skips, and answers
 * whether to run (for `describe.runIf`).
 */
export function needsRedisServer(moduleUrl: string): boolean {
  const requirement = redisServerRequirement();
  if (requirement.available) announceUsing(moduleUrl, requirement.detail);
  else announceSkip(moduleUrl, requirement.reason);
  return requirement.available;
}
