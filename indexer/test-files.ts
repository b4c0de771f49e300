/** Test helpers of the indexer suites: data files on disk, whole-catalogue reads, CLI runs. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CatalogueInfo, Quote } from '../service/catalogue/port.ts';
import { openSqliteCatalogue } from '../service/catalogue/sqlite/catalogue.ts';

/** A quote as a data file holds it: no quote_length (the indexer computes it). */
export function dataRecord(quote: Quote): Record<string, unknown> {
  const { quote_length: _, ...rest } = quote;
  return rest;
}

/** Writes records as a pretty-printed JSON array or as NDJSON; returns the path. */
export async function writeDataFile(
  path: string,
  records: readonly unknown[],
  format: 'json' | 'ndjson',
): Promise<string> {
  const text =
    format === 'json'
      ? `${JSON.stringify(records, null, 2)}\n`
      : `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
  await writeFile(path, text);
  return path;
}

/** Everything a SQLite catalogue file serves: its info and every quote, by id. */
export async function readCatalogue(path: string): Promise<{ info: CatalogueInfo; quotes: Quote[] }> {
  const catalogue = openSqliteCatalogue({ path });
  try {
    const info = await catalogue.info();
    const quotes: Quote[] = [];
    for (let page = 1; quotes.length < info.count; page++) {
      const { items } = await catalogue.list({ filters: {}, sort: [], page, limit: 100, fields: null });
      if (items.length === 0) break;
      quotes.push(...(items as Quote[]));
    }
    return { info, quotes };
  } finally {
    await catalogue.close();
  }
}

/** Files left in a directory, e.g. to prove an aborted build left no temp file behind. */
export async function filesIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

export function byId(quotes: readonly Quote[]): Quote[] {
  return [...quotes].sort((a, b) => a.id - b.id);
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'indexer', 'cli.ts');

/** Starts the CLI as `npm run index` does, with only the given environment (plus PATH). */
export function startIndexer(args: readonly string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** How a run of the indexer's command line ended, with all it wrote. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The end of a started run of the command line, once its output is closed. */
export function finished(child: ChildProcess): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
