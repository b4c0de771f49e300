/**
 * `npm run index -- <file>`: validates a data file and replaces the configured catalogue with it.
 * Exit codes: 0 indexed, 1 file rejected, 2 usage or configuration error, 3 backend failure,
 * 130/143 interrupted by SIGINT/SIGTERM. See USAGE.

 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CatalogueLogger } from '../service/catalogue/port.ts';
import { type Config, ConfigError, loadConfig } from '../service/config.ts';
import { IndexAbortedError, IndexInputError, IndexValidationError, indexFile } from './index-file.ts';
import { createProgressLine, createProgressLog } from './progress.ts';
import { MAX_GENRES, MAX_LABEL_LENGTH, MAX_QUOTE_LENGTH, MAX_URL_LENGTH, type Problem } from './validate.ts';

const USAGE = `Usage: npm run index -- <file>
       npm run index -- --refuse-duplicates <file>
       node indexer/cli.ts [--refuse-duplicates] <file>

Validates every quote in <file> and replaces the configured catalogue with them.
Nothing changes unless every record is valid: the new catalogue is built beside the live
one and swapped in atomically (SQLite: a new file renamed over the old one; Meilisearch: a new
index swapped with the live one), so readers see the old catalogue or the new one, never a mix.

Input formats (told apart by the first character):
  [  a JSON array of quote objects
  {  NDJSON: one quote object per line, blank lines ignored
Both are streamed, so memory does not grow with the file. The file must be UTF-8.

Each record needs: id, author_id, work_id (integers >= 1, ids unique), author, work,
category (non-empty strings, at most ${MAX_LABEL_LENGTH} characters), genre (a string or 1 to ${MAX_GENRES}
strings), publish_date (YYYY, YYYY-MM or YYYY-MM-DD, a real date), source (absolute
http/https URL, at most ${MAX_URL_LENGTH} characters), quote (at most ${MAX_QUOTE_LENGTH} characters) and
optionally language (an ISO 639-1 code in lower case: en, fr, de, es...; a quote
without one has no language). One author_id per author name and back; one work_id per
(work, author) and back.
quote_length is computed (code points); unknown fields are ignored with a warning.

Data-quality checks warn on stderr, each fault named by record and line: the same quote
twice (same folded text and author), an author or a work spelled two ways (the same folded
name or title by the same author, written differently), and a work (same folded title and
source) under two authors. Such a file keeps the rules above, so it is indexed.

Options:
  --refuse-duplicates  refuse a file with such faults, each listed as a problem (exit 1)
  --allow-duplicates   index it with warnings: the default, accepted for earlier scripts
  -h, --help           this text

Environment (the same as the service's):
  SEARCH_BACKEND   sqlite (default) or meilisearch
  SQLITE_PATH      catalogue file for sqlite (default data/quotes.db)
  MEILI_HOST       Meilisearch address (default http://127.0.0.1:7700)
  MEILI_ADMIN_KEY  key allowed to create and swap indexes (falls back to MEILI_API_KEY)
  MEILI_INDEX      live index name (default quotes)

Progress goes to stderr: one line redrawn in place on a terminal, else a line every 5 s
(none for a shorter run), including while the backend finishes after the file is read.

Exit codes:
  0    catalogue replaced; one summary line on stdout
  1    file rejected (missing, unreadable, malformed, empty, or invalid records: every
       problem is listed on stderr as "record N (line L): field: message")
  2    usage or configuration error
  3    the backend failed (unreachable, not writable)
  130  interrupted (Ctrl-C); 143 on SIGTERM. The live catalogue is unchanged.
`;

const EXIT_REJECTED = 1;
const EXIT_USAGE = 2;
const EXIT_BACKEND = 3;

type Parsed = { help: true } | { help: false; file: string; refuseDuplicates: boolean } | { error: string };

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  'refuse-duplicates': { type: 'boolean' },
  'allow-duplicates': { type: 'boolean' },
} as const;

/**
 * The command line, read by `node:util` parseArgs in its non-strict mode so that every option is
 * judged here, in order: the first unknown option (or an option given a value) is the error, and
 * `--help` before any such error wins.
 */
function readArgs(args: readonly string[]): Parsed {
  const { tokens } = parseArgs({
    args: [...args],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const files: string[] = [];
  const given = new Set<string>();
  for (const token of tokens) {
    if (token.kind === 'positional') files.push(token.value);
    else if (token.kind === 'option') {
      const known = Object.hasOwn(OPTIONS, token.name);
      if (!known || token.inlineValue === true) {
        const written = token.inlineValue === true ? args[token.index] : token.rawName;
        return { error: `unknown option '${written}'` };
      }
      if (token.name === 'help') return { help: true };
      given.add(token.name);
    }
  }
  if (given.has('refuse-duplicates') && given.has('allow-duplicates'))
    return { error: '--refuse-duplicates and --allow-duplicates contradict each other' };
  if (files.length === 0) return { error: 'missing <file>' };
  if (files.length > 1) return { error: `expected one file, got ${files.length}` };
  return { help: false, file: files[0] as string, refuseDuplicates: given.has('refuse-duplicates') };
}

/** The first bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Why the file at `sqlitePath` must not be replaced by the catalogue, or undefined: a build
 * replaces whatever is there, and a mistyped SQLITE_PATH (the data file itself, or any other
 * file) would be lost to it. A missing or empty file, or an SQLite database, is fair game.
 */
function sqliteTargetRefusal(sqlitePath: string, dataFile: string): string | undefined {
  const target = statSync(sqlitePath, { throwIfNoEntry: false });
  if (target === undefined || !target.isFile() || target.size === 0) return undefined;
  const data = statSync(dataFile, { throwIfNoEntry: false });
  if (data !== undefined && data.dev === target.dev && data.ino === target.ino) {
    return `SQLITE_PATH ${sqlitePath} is the data file itself: the catalogue would replace it; choose another path`;
  }
  const head = Buffer.alloc(SQLITE_HEADER.length);
  let read = 0;
  try {
    const fd = openSync(sqlitePath, 'r');
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Unreadable: the backend reports it as it opens the file.
    return undefined;
  }
  if (read < head.length || !head.equals(SQLITE_HEADER)) {
    return `SQLITE_PATH ${sqlitePath} is not a catalogue (not an SQLite database): refusing to replace it; remove it or choose another path`;
  }
  return undefined;
}

/** Where the catalogue goes, for the summary line; never includes keys. */
function target(config: Config): string {
  return config.searchBackend === 'meilisearch'
    ? `meilisearch index ${config.meili.index} at ${config.meili.host}`
    : `sqlite ${config.sqlitePath}`;
}

function formatProblem(p: Problem): string {
  const where = p.line === undefined ? `record ${p.record}` : `record ${p.record} (line ${p.line})`;
  return p.field === undefined ? `${where}: ${p.message}` : `${where}: ${p.field}: ${p.message}`;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const SECRET_KEY = /key|password|secret|token|authorization/i;

/**
 * Backend messages on stderr, one line each. Info is detail a person running the command
 * rarely needs, so it shows only at LOG_LEVEL=debug or finer.
 */
function stderrLogger(level: string, write: (line: string) => void): CatalogueLogger {
  const at = LEVELS.indexOf(level);
  const line = (tag: string, obj: object, msg?: string) => {
    const fields = Object.entries(obj)
      .filter(([k]) => !SECRET_KEY.test(k))
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
    write(`${tag}${msg ?? ''}${fields.length > 0 ? ` (${fields.join(', ')})` : ''}`);
  };
  const showInfo = at <= LEVELS.indexOf('debug');
  const showWarn = at <= LEVELS.indexOf('warn');
  const showError = at <= LEVELS.indexOf('error');
  return {
    info(obj, msg) {
      if (showInfo) line('', obj, msg);
    },
    warn(obj, msg) {
      if (showWarn) line('warning: ', obj, msg);
    },
    error(obj, msg) {
      if (showError) line('error: ', obj, msg);
    },
  };
}

async function main(): Promise<number> {
  const { stdout, stderr } = process;
  const fail = (line: string) => stderr.write(`indexer: ${line}\n`);
  const parsed = readArgs(process.argv.slice(2));
  if ('error' in parsed) {
    fail(`${parsed.error} (see --help)`);
    stderr.write(`${USAGE.split('\n')[0]}\n`);
    return EXIT_USAGE;
  }
  if (parsed.help) {
    stdout.write(USAGE);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    fail(error.message);
    return EXIT_USAGE;
  }
  if (config.searchBackend === 'sqlite') {
    const refusal = sqliteTargetRefusal(config.sqlitePath, parsed.file);
    if (refusal !== undefined) {
      fail(refusal);
      return EXIT_USAGE;
    }
  }

  const progress = stderr.isTTY ? createProgressLine(stderr) : createProgressLog(stderr);
  // Keeps progress moving while the backend finishes (Meilisearch can take minutes after the file).
  const heartbeat = setInterval(() => progress.refresh(), 1000).unref();
  const say = (line: string) => {
    progress.clear();
    stderr.write(`${line}\n`);
  };
  const controller = new AbortController();
  let signalExit = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalExit !== 0) process.exit(signalExit); // a second Ctrl-C does not wait for the clean-up
    signalExit = signal === 'SIGINT' ? 130 : 143;
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const summary = await indexFile(parsed.file, config, {
      logger: stderrLogger(config.logLevel, say),
      signal: controller.signal,
      onProgress: progress.update,
      refuseDuplicates: parsed.refuseDuplicates,
    });
    progress.clear();
    stdout.write(
      `indexed ${summary.records} ${summary.records === 1 ? 'quote' : 'quotes'} into ${target(config)} in ${summary.seconds.toFixed(2)} s ` +
        `(version ${summary.version})\n`,
    );
    return 0;
  } catch (error) {
    progress.clear();
    if (error instanceof IndexValidationError) {
      for (const problem of error.problems) stderr.write(`${formatProblem(problem)}\n`);
      const more = error.total - error.problems.length;
      if (more > 0) stderr.write(`... and ${more} more problem${more === 1 ? '' : 's'}\n`);
      fail(error.message);
      return EXIT_REJECTED;
    }
    if (error instanceof IndexInputError) {
      fail(error.message);
      return EXIT_REJECTED;
    }
    if (error instanceof IndexAbortedError) {
      fail(error.message);
      return signalExit || 130;
    }
    // Backend failures: the message says what failed; the stack is for developers only.
    fail(
      `the ${config.searchBackend} backend failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    if (config.logLevel === 'debug' || config.logLevel === 'trace')
      stderr.write(`${(error as Error).stack}\n`);
    return EXIT_BACKEND;
  } finally {
    clearInterval(heartbeat);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

process.exitCode = await main();
