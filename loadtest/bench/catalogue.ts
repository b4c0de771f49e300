/**
 * The benchmark's catalogue: N generated quotes (cached, since generation is deterministic in
 * count and seed), indexed into a fresh SQLite file with the project's own indexer CLI.
 */

import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { INDEXER_NODE_FLAGS, runMeasured } from './processes.ts';

/** The generated NDJSON file and whether this run generated it. */
export interface CatalogueFile {
  file: string;
  bytes: number;
  /** Seconds spent generating; null when the cached file was reused. */
  generateSeconds: number | null;
}

/**
 * Reuses `<cacheDir>/quotes-<count>-seed<seed>.ndjson` or generates it with
 * `indexer/generate.ts`. The file appears under its name only once complete, so an
 * interrupted generation is never reused.
 */
export async function ensureCatalogue(
  root: string,
  cacheDir: string,
  count: number,
  seed: number,
  env: NodeJS.ProcessEnv,
): Promise<CatalogueFile> {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `quotes-${count}-seed${seed}.ndjson`);
  try {
    const { size } = statSync(file);
    if (size > 0) return { file, bytes: size, generateSeconds: null };
  } catch {
    // Not generated yet.
  }
  const partial = `${file}.${process.pid}.tmp`;
  const run = await runMeasured(
    'generator',
    process.execPath,
    [join(root, 'indexer/generate.ts'), '--count', String(count), '--seed', String(seed), '--out', partial],
    env,
  );
  if (run.code !== 0) {
    rmSync(partial, { force: true });
    throw new Error(`indexer/generate.ts exited ${run.code}:\n${run.output.trim()}`);
  }
  renameSync(partial, file);
  return { file, bytes: statSync(file).size, generateSeconds: run.seconds };
}

/** Indexing time and the indexer's peak memory. */
export interface Indexing {
  seconds: number;
  /** Undefined when the platform offers no way to measure it. */
  peakRssBytes: number | undefined;
}

/** Indexes `file` into the SQLite catalogue at `sqlitePath` with `indexer/cli.ts`. */
export async function indexCatalogue(
  root: string,
  file: string,
  sqlitePath: string,
  env: NodeJS.ProcessEnv,
): Promise<Indexing> {
  const args = [...INDEXER_NODE_FLAGS, join(root, 'indexer/cli.ts'), file];
  const run = await runMeasured('indexer', process.execPath, args, {
    ...env,
    SEARCH_BACKEND: 'sqlite',
    SQLITE_PATH: sqlitePath,
  });
  if (run.code !== 0) throw new Error(`indexer/cli.ts exited ${run.code}:\n${run.output.trim()}`);
  return { seconds: run.seconds, peakRssBytes: run.peakRssBytes };
}
