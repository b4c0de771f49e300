/**
 * One-shot step of the compose deployment: makes sure the two API keys exist and writes them
 * into files, so that the master key never leaves this step.
 *
 *   indexer.key  admin-scoped key of the indexer (create, fill, swap, delete indexes)
 *   search.key   read-only key of the service, scoped to the live index
 *
 * With two directories, each key goes into its own: the compose deployment mounts one volume per
 * key, so that the service never holds the indexer's key. With one, both go there.
 *
 * Idempotent: keys are found by name and created when missing (or re-created under the same uid,
 * and so with the same value, when their scope changed, since the engine cannot change a key's
 * actions).
 *
 *   MEILI_HOST=http://127.0.0.1:7700 MEILI_MASTER_KEY=... [MEILI_INDEX=quotes] \
 *     node deploy/meili-keys.ts <indexer key dir> [<search key dir>]
 */
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Key, Meilisearch } from 'meilisearch';
import { directoryUids } from '../service/catalogue/meilisearch/authors.ts';
import { buildIndexPrefix } from '../service/catalogue/meilisearch/request.ts';
import { parseCommandLine, UsageError } from '../service/command-line.ts';
import { meiliHostProblem } from '../service/config.ts';

/**
 * What the indexer does: list indexes, create a build index, configure and fill it, read its
 * stats, ids and tasks, cancel its tasks, swap it in and delete the old one.
 */
export const INDEXER_KEY_ACTIONS = [
  'indexes.create',
  'indexes.get',
  'indexes.delete',
  'indexes.swap',
  'settings.get',
  'settings.update',
  'documents.add',
  // Reads back the ids of a build, in the engine's order, before marking it held in id order.
  'documents.get',
  'tasks.get',
  'tasks.cancel',
  'stats.get',
  'search',
] as const;

export interface KeySpec {
  /** File the key is written to. */
  file: string;
  name: string;
  description: string;
  actions: string[];
  indexes: string[];
}

/**
 * What the service does, on the live index only: read documents. `documents.get` is what it
 * needs: it lists through `POST /documents/fetch` (filter, sort, offset, limit and an exact
 * total: the engine's cheapest exact answer to a listing, far cheaper than a search, and the
 * only one fast on deep pages) and gets a quote by `GET /documents/{id}`. `search` stays for a
 * replica of an earlier release, which searches, during a rolling update. Both are read-only.
 */
export const SERVICE_KEY_ACTIONS = ['search', 'documents.get'] as const;

/**
 * The indexes the indexer writes for the live index `index`: the live quotes, authors and works,
 * and the build of each (`<live>_build_<stamp>`, request.ts `buildIndexUid`; a swap's marker is
 * `<build>_swapped`, a build's name too).
 */
export function indexerIndexes(index: string): string[] {
  const { authors, works } = directoryUids(index);
  return [index, authors, works].flatMap((live) => [live, `${buildIndexPrefix(live)}*`]);
}

/** The keys of a deployment whose live index is `index`. */
export function keySpecs(index: string): KeySpec[] {
  return [
    {
      file: 'indexer.key',
      name: `${index}-indexer`,
      description: `Indexer of ${index}: builds ${index}_build_* indexes and swaps them in`,
      actions: [...INDEXER_KEY_ACTIONS],
      // Its own indexes by name, not every name beginning with the live one's: on a shared
      // engine `quotes*` would also take another application's `quotes_staging`. Such a key
      // cannot see the swap task (meilisearch/meilisearch#4103); the indexer settles the swap
      // without it (meilisearch/builder.ts, #settleHiddenSwap).
      indexes: indexerIndexes(index),
    },
    {
      file: 'search.key',
      name: `${index}-search`,
      description: `Quotes service: reads ${index} and its authors and works`,
      actions: [...SERVICE_KEY_ACTIONS],
      indexes: [index, ...Object.values(directoryUids(index))],
    },
  ];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = [...a].sort();
  const y = [...b].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/**
 * Finds or creates each key; returns the key values by file name.
 *
 * A key whose scope changed is re-created under its uid. The engine derives a key's value from
 * its uid and the master key, so the value stays the same: the replicas already running and an
 * indexer at work keep their key, and read with the new scope from the moment it is created,
 * rather than failing until each is restarted (only the requests of the instant between the
 * deletion and the creation are refused).
 */
export async function ensureKeys(client: Meilisearch, index: string): Promise<Map<string, string>> {
  const existing = (await client.getKeys({ limit: 1000 })).results;
  const values = new Map<string, string>();
  for (const spec of keySpecs(index)) {
    const found: Key | undefined = existing.find((k) => k.name === spec.name);
    let key = found;
    if (
      found !== undefined &&
      !(sameSet(found.actions, spec.actions) && sameSet(found.indexes, spec.indexes))
    ) {
      await client.deleteKey(found.uid);
      key = undefined;
    }
    key ??= await client.createKey({
      ...(found === undefined ? {} : { uid: found.uid }),
      name: spec.name,
      description: spec.description,
      actions: spec.actions,
      indexes: spec.indexes,
      expiresAt: null,
    });
    values.set(spec.file, key.key);
  }
  return values;
}

const USAGE =
  'usage: node deploy/meili-keys.ts <directory for indexer.key> [<directory for search.key>] (one directory: both there)';

async function main(args: string[]): Promise<number> {
  let directories: string[];
  try {
    directories = parseCommandLine(args, {}, 2).positionals;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    return 2;
  }
  const [indexerDir, searchDir = indexerDir] = directories;
  const host = process.env.MEILI_HOST ?? 'http://127.0.0.1:7700';
  const masterKey = process.env.MEILI_MASTER_KEY;
  const index = process.env.MEILI_INDEX ?? 'quotes';
  if (indexerDir === undefined) {
    console.error(USAGE);
    return 2;
  }
  if (masterKey === undefined || masterKey === '') {
    console.error('MEILI_MASTER_KEY is required (the keys are created with it)');
    return 2;
  }
  const hostProblem = meiliHostProblem(host);
  if (hostProblem !== undefined) {
    console.error(hostProblem);
    return 2;
  }
  const client = new Meilisearch({ host, apiKey: masterKey, timeout: 10_000 });
  const values = await ensureKeys(client, index);
  const written: string[] = [];
  for (const [file, value] of values) {
    const dir = file === 'indexer.key' ? indexerDir : (searchDir ?? indexerDir);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, file);
    written.push(path);
    // Written beside, then renamed: a reader never sees half a key.
    await writeFile(`${path}.tmp`, value, { mode: 0o600 });
    await chmod(`${path}.tmp`, 0o600);
    await rename(`${path}.tmp`, path);
  }
  console.log(`Meilisearch keys for index ${index} written to ${written.join(', ')}`);
  return 0;
}

// Not import.meta.main: it came with Node 24.2, and an image built on an older cached node:24
// would then exit 0 without writing a key.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(
        `could not provision the Meilisearch keys: ${error instanceof Error ? error.message : String(error)}`,
      );
      process.exitCode = 1;
    },
  );
}
