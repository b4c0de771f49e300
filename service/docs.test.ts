/**
 * The documentation's examples, run: every `curl` in a fenced block of the README and of docs/
 * goes to a service started as `npm start` starts it (the embedded engine, the bundled catalogue,
 * the development user), with the host and port rewritten, and must get the status its text
 * states: a `→ 404` or a leading `# 404` in its comment, else the `HTTP/1.1 304` line shown after it, else 200. A block
 * preceded by `<!-- examples need: … -->` needs what the comment names (Docker Compose, a
 * Meilisearch engine) and is skipped with that reason. The links between the pages, and the
 * sections of docs/ that the code's comments cite, must lead somewhere.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runProcess } from './test-support/processes.ts';
import { announceSkip } from './test-support/suites.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = ['README.md', 'loadtest/README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)]
  .filter((page) => page.endsWith('.md'))
  .sort();
const NEEDS = /^<!--\s*examples need:\s*(.+?)\s*-->$/;

interface Example {
  page: string;
  line: number;
  /** The commands before it in its block (variables it uses), then the example itself. */
  setup: string[];
  command: string;
  status: number;
  /** Why it cannot run here, when its block says what it needs. */
  needs?: string;
}

/** Every `curl` command of a page's fenced blocks, with the status its text states. */
function examplesOf(page: string): Example[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\w*)/.exec(lines[i] as string);
    if (fence === null) continue;
    const previous = lines
      .slice(0, i)
      .reverse()
      .find((l) => l.trim() !== '');
    const needs = NEEDS.exec(previous?.trim() ?? '')?.[1];
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end] as string)) end++;
    if (['sh', 'bash', 'console', ''].includes(fence[2] as string)) {
      examples.push(...curlsOf(page, lines.slice(i + 1, end), i + 2, needs));
    }
    i = end;
  }
  return examples;
}

function curlsOf(page: string, block: string[], firstLine: number, needs: string | undefined): Example[] {
  const examples: Example[] = [];
  const setup: string[] = [];
  for (let j = 0; j < block.length; j++) {
    const start = j;
    let command = (block[j] as string).trim();
    while (command.endsWith('\\') && j + 1 < block.length)
      command = `${command.slice(0, -1)} ${block[++j]?.trim()}`;
    if (command === '' || command.startsWith('#')) continue;
    const [code, comment = ''] = splitComment(command);
    if (!/^curl\s/.test(code)) {
      if (code.includes('curl ')) setup.push(code);
      continue;
    }
    const stated =
      /→\s*(\d{3})/.exec(comment)?.[1] ??
      /^(\d{3})\b/.exec(comment.trim())?.[1] ??
      shownStatus(block.slice(j + 1));
    examples.push({
      page,
      line: firstLine + start,
      setup: [...setup],
      command: code,
      status: Number(stated ?? 200),
      ...(needs === undefined ? {} : { needs }),
    });
  }
  return examples;
}

/** A command and its trailing comment: the first ` #` outside quotes. */
function splitComment(line: string): [string, string?] {
  let quote = '';
  for (let k = 0; k < line.length; k++) {
    const c = line[k] as string;
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && /\s/.test(line[k - 1] ?? '')) return [line.slice(0, k).trim(), line.slice(k + 1)];
  }
  return [line.trim()];
}

/** The status of an `HTTP/1.1 …` answer shown right after a command, before the next one. */
function shownStatus(after: string[]): string | undefined {
  for (const line of after) {
    const shown = /^\s*HTTP\/1\.1 (\d{3})/.exec(line);
    if (shown !== null) return shown[1];
    if (/^\s*curl\s/.test(line)) return undefined;
  }
  return undefined;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1] as string);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

const examples = PAGES.flatMap(examplesOf);
const runnable = examples.filter((e) => e.needs === undefined);
for (const e of examples.filter((x) => x.needs !== undefined)) {
  announceSkip(import.meta.url, `${e.page}:${e.line} needs ${e.needs}`);
}

describe('the documentation', () => {
  it('has curl examples on the pages that describe requests', () => {
    const pages = new Set(runnable.map((e) => e.page));
    for (const page of ['README.md', 'docs/api.md', 'docs/operations.md']) expect(pages).toContain(page);
  });

  it('links only to pages and sections that exist', () => {
    const broken: string[] = [];
    const absent = new Set<string>();
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        const [path, anchor] = (target as string).split('#');
        const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path as string);
        if (!existsSync(file)) {
          // A page still to be written is announced, not failed: the link is right once it lands.
          absent.add(`${page} links to ${relative(ROOT, file)}, not in this tree`);
          continue;
        }
        if (anchor !== undefined && !anchorsOf(file).has(anchor)) broken.push(`${page}: ${target}`);
      }
    }
    for (const line of absent) announceSkip(import.meta.url, line);
    expect(broken).toEqual([]);
  });

  it('has every section that a comment of the code cites', () => {
    const broken: string[] = [];
    for (const file of sourceFiles()) {
      for (const [cited, page, anchor] of readFileSync(file, 'utf8').matchAll(
        /(docs\/[a-z-]+\.md)#([a-z0-9_-]+)/g,
      )) {
        const target = join(ROOT, page as string);
        if (!existsSync(target) || !anchorsOf(target).has(anchor as string))
          broken.push(`${relative(ROOT, file)}: ${cited}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

/** The project's TypeScript files. */
function sourceFiles(): string[] {
  return ['service', 'indexer', 'loadtest', 'deploy'].flatMap((top) =>
    readdirSync(join(ROOT, top), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.includes('node_modules'))
      .map((f) => join(ROOT, top, f)),
  );
}

describe('the documentation examples, against a started service', () => {
  let child: ChildProcess;
  let port: number;
  let dir: string;
  let output = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docs-examples-'));
    port = await freePort();
    child = spawn(process.execPath, ['service/server.ts'], {
      cwd: ROOT,
      // As `npm start` on a fresh clone: no users configured, so the development user exists;
      // a limit the examples cannot reach, since they all come from one client.
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(port),
        SQLITE_PATH: join(dir, 'quotes.db'),
        RATE_LIMIT_MAX: '100000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`the service did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** The example as a user would type it, sent to the test's service, printing the status to stderr. */
  function script(example: Example): string {
    const here = (command: string) =>
      command.replace(/(https?:\/\/)?(localhost|127\.0\.0\.1):3000/g, `http://127.0.0.1:${port}`);
    const measured = example.command.replace(/^curl\s/, `curl -sS -w '%{stderr}status %{http_code}\\n' `);
    return [...example.setup.map(here), here(measured)].join('\n');
  }

  it.each(runnable.map((e) => [`${e.page}:${e.line} ${e.command} → ${e.status}`, e] as const))(
    '%s',
    async (_name, example) => {
      const result = await runProcess('bash', ['-c', script(example)], { cwd: ROOT, timeoutMs: 20_000 });
      const status = /status (\d{3})\n?$/.exec(result.stderr)?.[1];
      expect({ status: Number(status), stderr: result.stderr.replace(/status \d{3}\n?$/, '') }).toEqual({
        status: example.status,
        stderr: '',
      });
    },
  );
});
