import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from './command-line.ts';

const OPTIONS = {
  count: { type: 'string' },
  quick: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function mistake(args: string[], maxPositionals = 0): { code: string; message: string } {
  try {
    parseCommandLine(args, OPTIONS, maxPositionals);
  } catch (error) {
    if (error instanceof UsageError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error(`${JSON.stringify(args)} was accepted`);
}

describe('parseCommandLine', () => {
  it('reads options in both forms, flags, short names and positionals up to the limit', () => {
    expect(parseCommandLine(['--count', '3', '--quick'], OPTIONS)).toEqual({
      values: { count: '3', quick: true },
      positionals: [],
    });
    expect(parseCommandLine(['a.ndjson', '--count=4', '-h'], OPTIONS, 1)).toEqual({
      values: { count: '4', help: true },
      positionals: ['a.ndjson'],
    });
  });

  it.each([
    [['--verbose'], "unknown option '--verbose' (see --help)"],
    [['--count'], '--count needs a value (see --help)'],
    [['--count='], '--count needs a value (see --help)'],
    [['--quick=yes'], '--quick takes no value (see --help)'],
    [['--count', '1', '--count', '2'], '--count given more than once'],
    [['--quick', '--quick'], '--quick given more than once'],
    [['extra'], "unexpected argument 'extra' (see --help)"],
  ])('refuses %j with one line and the code "usage"', (args, message) => {
    expect(mistake(args)).toEqual({ code: 'usage', message });
  });

  it('counts positionals against the limit given', () => {
    expect(mistake(['a', 'b', 'c'], 2)).toEqual({
      code: 'usage',
      message: "unexpected argument 'c' (see --help)",
    });
  });
});
