/**
 * Vitest reporter: after the run, one line per test file saying how many tests ran, skipped and
 * failed, with the servers it used and why any part of it skipped (the `[using]` and `[skip]`
 * lines of suites.ts). A reader of a CI log sees at the end what was proven on what, and what
 * was not proven here.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

type UserConsoleLog = Parameters<NonNullable<Reporter['onUserConsoleLog']>>[0];

import { SKIP_TAG, USING_TAG } from './suites.ts';

interface Notes {
  using: Set<string>;
  skip: Set<string>;
}

/**
 * `<tag> <file or suite>: <text>` as suites.ts prints it, or undefined for any other line. The
 * line is filed under the test file that printed it when vitest says which; else under the name
 * before the colon, which suites.ts makes the file's.
 */
function parseTagged(line: string): { tag: string; name: string; text: string } | undefined {
  const tag = [SKIP_TAG, USING_TAG].find((candidate) => line.startsWith(`${candidate} `));
  if (tag === undefined) return undefined;
  const rest = line.slice(tag.length + 1);
  const colon = rest.indexOf(': ');
  if (colon <= 0) return undefined;
  return { tag, name: rest.slice(0, colon), text: rest.slice(colon + 2) };
}

export default class SummaryReporter implements Reporter {
  private readonly notes = new Map<string, Notes>();
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  /** The test file a log line came from, relative to the project, when vitest knows it. */
  private fileOf(log: UserConsoleLog): string | undefined {
    const task = log.taskId === undefined ? undefined : this.vitest?.state.idMap.get(log.taskId);
    const path = task?.file?.filepath;
    return path === undefined ? undefined : relative(this.vitest?.config.root ?? process.cwd(), path);
  }

  onUserConsoleLog(log: UserConsoleLog): void {
    for (const line of log.content.split('\n')) {
      const tagged = parseTagged(line.trim());
      if (tagged === undefined) continue;
      const fromTask = this.fileOf(log);
      const { tag, name } = tagged;
      const file = fromTask ?? name;
      // Said of another suite than the file (a shared helper naming its caller): keep the name.
      const text = fromTask === undefined || fromTask === name ? tagged.text : `${name}: ${tagged.text}`;
      let notes = this.notes.get(file);
      if (notes === undefined) {
        notes = { using: new Set(), skip: new Set() };
        this.notes.set(file, notes);
      }
      (tag === SKIP_TAG ? notes.skip : notes.using).add(text);
    }
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = [...testModules]
      .map((module) => summarise(module, this.notes.get(module.relativeModuleId)))
      .sort((a, b) => ORDER.indexOf(a.verdict) - ORDER.indexOf(b.verdict) || a.file.localeCompare(b.file));
    const count = (verdict: Verdict) => rows.filter((row) => row.verdict === verdict).length;
    const lines = [
      '',
      `Suites: ${count('ran')} ran in full, ${count('partly skipped')} partly skipped, ${count('skipped')} skipped, ${count('failed')} failed`,
    ];
    for (const row of rows) {
      lines.push(`  ${row.verdict.padEnd(14)} ${row.file}: ${row.counts}`);
      for (const text of row.using) lines.push(`      using ${text}`);
      for (const text of row.skip) lines.push(`      skip: ${text}`);
      if (row.verdict !== 'ran' && row.verdict !== 'failed' && row.skip.length === 0)
        lines.push('      skip: no reason printed (a test marked skip or todo)');
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

type Verdict = 'failed' | 'skipped' | 'partly skipped' | 'ran';
const ORDER: Verdict[] = ['failed', 'skipped', 'partly skipped', 'ran'];

function summarise(module: TestModule, notes: Notes | undefined) {
  let passed = 0;
  let skipped = 0;
  let failed = 0;
  for (const test of module.children.allTests()) {
    const state = test.result().state;
    if (state === 'passed') passed++;
    else if (state === 'failed') failed++;
    else skipped++;
  }
  const moduleFailed = module.state() === 'failed';
  const verdict: Verdict =
    failed > 0 || moduleFailed ? 'failed' : passed === 0 ? 'skipped' : skipped > 0 ? 'partly skipped' : 'ran';
  const counts = [
    `${passed} passed`,
    skipped > 0 ? `${skipped} skipped` : '',
    failed > 0 ? `${failed} failed` : '',
  ]
    .filter((part) => part !== '')
    .join(', ');
  return {
    file: module.relativeModuleId,
    verdict,
    counts,
    using: [...(notes?.using ?? [])],
    skip: [...(notes?.skip ?? [])],
  };
}
