/**
 * The command lines of the project's programs (the generator, the benchmark, the key step, the
 * k6 runner), read with `node:util`'s parseArgs: one set of rules, and one wording for a mistake.
 * Every option is given at most once, and with a value when it takes one.
 */
import { parseArgs } from 'node:util';
import { CodedError } from './coded-error.ts';

/** A bad command line; the message is the one line printed before exiting with status 2. */
export class UsageError extends CodedError {
  override name = 'UsageError';
  readonly code = 'usage';
}

export type Options = Record<string, { type: 'string' | 'boolean'; short?: string }>;

export interface CommandLine {
  /** Each option given, by its long name: a string, or `true` for a flag. */
  values: Record<string, string | true>;
  positionals: string[];
}

/**
 * Parses the arguments after the script name (`--name value` or `--name=value`), with at most
 * `maxPositionals` arguments that are not options. Throws {@link UsageError}.
 */
export function parseCommandLine(args: readonly string[], options: Options, maxPositionals = 0): CommandLine {
  let parsed: { values: Record<string, (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: true,
      options: Object.fromEntries(
        Object.entries(options).map(([name, option]) => [name, { ...option, multiple: true }]),
      ),
    }) as typeof parsed;
  } catch (error) {
    throw usageError(error);
  }
  const values: Record<string, string | true> = {};
  for (const [name, given] of Object.entries(parsed.values)) {
    const [value] = given ?? [];
    if (value === undefined) continue;
    if ((given ?? []).length > 1) throw new UsageError(`--${name} given more than once`);
    if (value === '') throw new UsageError(`--${name} needs a value (see --help)`);
    values[name] = value === true ? true : String(value);
  }
  const extra = parsed.positionals[maxPositionals];
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}' (see --help)`);
  return { values, positionals: parsed.positionals };
}

/** parseArgs's own errors, in this module's words: the option named, no advice on `--`. */
function usageError(error: unknown): UsageError {
  const { code, message } = error as { code?: string; message: string };
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
    return new UsageError(`unknown option '${option}' (see --help)`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = message.includes('does not take an argument');
    return new UsageError(`${option} ${flag ? 'takes no value' : 'needs a value'} (see --help)`);
  }
  return new UsageError(message);
}
