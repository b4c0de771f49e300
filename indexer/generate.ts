/**
 * Synthetic catalogue generator for scale tests and benchmarks.
 *
 *   node indexer/generate.ts --count N [--seed S] [--out FILE]
 *
 * Writes NDJSON, one quote per line, with every field of docs/api.md#the-quote except
 * `quote_length` (the indexer computes it). The output is a pure function of (count, seed): the
 * same arguments give byte-identical files on any machine, because every choice comes from one
 * seeded PRNG and nothing reads the clock, the locale or Math.random.
 *
 * The shape imitates a real quote collection: about count/150 authors (50 to 10,000) and
 * count/25 works (at most 250,000), each work owned by one author; author and work popularity
 * follow Zipf laws, so a few authors and works hold many quotes; 62 genres; four categories
 * skewed towards fiction; names, titles and texts carry accents, apostrophes and hyphens.
 * Every author name is unique and every title is unique within its author's works, both compared
 * in the contract's folded form, so author_id ↔ author and work_id ↔ (work, author) are
 * one-to-one however a consumer compares them.
 *
 * Memory is bounded by the catalogue of authors and works, never by the number of quotes:
 * quotes are drawn one at a time and written in chunks that respect stream backpressure.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { parseCommandLine, UsageError } from '../service/command-line.ts';
import { DEFAULT_SEED, MAX_COUNT } from './generate/catalogue.ts';
import { writeQuotes } from './generate/quotes.ts';

export {
  type CatalogueAuthor,
  type CatalogueWork,
  catalogueSize,
  DEFAULT_SEED,
  describeCatalogue,
  languageOfAuthor,
  MAX_COUNT,
  NEWEST_YEAR,
  OLDEST_YEAR,
} from './generate/catalogue.ts';
export { type GeneratedQuote, generateQuotes, writeQuotes } from './generate/quotes.ts';
export { QUOTE_MAX_LENGTH, QUOTE_MIN_LENGTH } from './generate/text.ts';

// ---------------------------------------------------------------------------------------------
// Command line

/** What the command line asks for. */
export type Command =
  | { kind: 'help' }
  | { kind: 'generate'; count: number; seed: number; out: string | null };

export const USAGE = `Usage: node indexer/generate.ts --count N [--seed S] [--out FILE]
       npm run generate -- --count N [--seed S] > quotes.ndjson

Writes N synthetic quotes as NDJSON (one JSON object per line, every field of the contract's
Quote except quote_length) to standard output, or to FILE. The same N and S always give
byte-identical output.

  --count N    number of quotes, 1 to ${MAX_COUNT} (required)
  --seed S     PRNG seed, an integer from 0 to 4294967295 (default ${DEFAULT_SEED})
  --out FILE   write to FILE instead of standard output
  --help       show this help
`;

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** Parses the arguments after the script name (`--name value` or `--name=value`). Throws {@link UsageError}. */
export function parseGenerateArgs(args: readonly string[]): Command {
  if (args.includes('--help') || args.includes('-h')) return { kind: 'help' };
  const { values } = parseCommandLine(args, {
    count: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
  });
  const rawCount = values.count as string | undefined;
  if (rawCount === undefined) throw new UsageError('--count is required (see --help)');
  const count = DECIMAL.test(rawCount) ? Number(rawCount) : Number.NaN;
  if (!(count >= 1 && count <= MAX_COUNT)) {
    throw new UsageError(`--count must be an integer from 1 to ${MAX_COUNT}, got '${rawCount}'`);
  }
  const rawSeed = values.seed as string | undefined;
  const seed = rawSeed === undefined ? DEFAULT_SEED : DECIMAL.test(rawSeed) ? Number(rawSeed) : Number.NaN;
  if (!(seed >= 0 && seed <= 0xffff_ffff)) {
    throw new UsageError(`--seed must be an integer from 0 to 4294967295, got '${rawSeed}'`);
  }
  return { kind: 'generate', count, seed, out: (values.out as string | undefined) ?? null };
}

/** Runs the command line and resolves to the exit status: 0 done, 1 output failed, 2 bad usage. */
export async function main(args: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parseGenerateArgs(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`generate: ${error.message}\n`);
    return 2;
  }
  if (command.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command.out === null) {
    // A reader that leaves early (`| head`) ends the run normally, without a stack trace.
    process.stdout.on('error', () => {});
    try {
      await writeQuotes(process.stdout, command.count, command.seed);
      return 0;
    } catch (error) {
      if (isClosedReader(error)) return 0;
      process.stderr.write(`generate: cannot write to standard output: ${describe(error)}\n`);
      return 1;
    }
  }
  const file = createWriteStream(command.out);
  try {
    await once(file, 'open');
    await writeQuotes(file, command.count, command.seed);
    file.end();
    await once(file, 'finish');
    return 0;
  } catch (error) {
    file.destroy();
    process.stderr.write(`generate: cannot write ${command.out}: ${describe(error)}\n`);
    return 1;
  }
}

function isClosedReader(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
