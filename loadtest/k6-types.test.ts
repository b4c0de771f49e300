/**
 * k6 strips TypeScript types without checking them, so a type error in a k6 script would only
 * show as a crash at run time, on a machine with k6. `tsc -p loadtest` is that check; these tests
 * keep it meaningful: it covers every script, no Node code, and fails on a broken script.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const SCRIPTS = ['smoke.ts', 'throughput.ts', 'rate-limit.ts', 'soak.ts', 'spike.ts'];

function tsc(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSC, ...args], { cwd: ROOT });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('tsc -p loadtest', () => {
  it('type-checks every k6 script and its helpers against @types/k6, and nothing of Node', async () => {
    const { code, output } = await tsc(['-p', 'loadtest', '--noEmit', '--listFiles']);
    expect(code, output).toBe(0);
    const files = output
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith(ROOT))
      .map((line) => relative(ROOT, line));
    for (const script of SCRIPTS) expect(files).toContain(`loadtest/${script}`);
    expect(files).toContain('loadtest/lib/mix.ts');
    expect(files.some((f) => f.startsWith('node_modules/@types/k6/'))).toBe(true);
    expect(files.filter((f) => f.startsWith('node_modules/@types/node/'))).toEqual([]);
    expect(files.filter((f) => /bench|k6-shim|\.test\.ts$/.test(f))).toEqual([]);
  });

  describe('on a broken script', () => {
    const dir = join(ROOT, 'loadtest', `.typecheck-${process.pid}`);
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('fails on a misused k6 API and on Node globals, which k6 does not have', async () => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ extends: '../tsconfig.json', include: ['*.ts'] }),
      );
      writeFileSync(
        join(dir, 'broken.ts'),
        [
          "import http from 'k6/http';",
          "import { nextRequest } from '../lib/mix.ts';",
          'export default function (): void {',
          '  http.get(42);',
          '  nextRequest(undefined);',
          '  const port: string = process.env.PORT;',
          '}',
          '',
        ].join('\n'),
      );
      const { code, output } = await tsc(['-p', relative(ROOT, dir), '--noEmit']);
      expect(code).not.toBe(0);
      expect(output).toMatch(/broken\.ts\(4,\d+\): error TS2345/);
      expect(output).toMatch(/broken\.ts\(5,\d+\): error TS2554|broken\.ts\(5,\d+\): error TS2345/);
      expect(output).toMatch(/broken\.ts\(6,\d+\): error TS25(80|91): Cannot find name 'process'/);
    });
  });
});
