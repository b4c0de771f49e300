import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexInputError, MAX_RECORD_CHARS, openRecords, type RawRecord } from './read.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quotes-read-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let fileNumber = 0;
async function file(content: string | Uint8Array): Promise<string> {
  const path = join(dir, `data-${++fileNumber}`);
  await writeFile(path, content);
  return path;
}

async function readAll(path: string): Promise<{ format: string; records: RawRecord[]; bytes: number }> {
  const source = await openRecords(path);
  try {
    const records: RawRecord[] = [];
    for await (const batch of source.batches()) records.push(...batch);
    return { format: source.format, records, bytes: source.bytesRead };
  } finally {
    await source.close();
  }
}

/** The one-line message of the IndexInputError that reading `path` throws. */
async function inputError(path: string): Promise<string> {
  const error = await readAll(path).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IndexInputError);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

/** Strings that trip naive scanners: brackets, commas and quotes inside strings, escapes, astral characters. */
function trickyRecords(count: number): object[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    quote: `"],{[ \\" \\\\ ${'é𝄞'.repeat(i % 7)} ${'x'.repeat(i % 600)}`,
    nested: { list: [i, { deep: ']' }], empty: [] },
  }));
}

describe('JSON arrays', () => {
  it('yields each element with its record and line number', async () => {
    const path = await file('[\n  {"id": 1},\n  {"id": 2,\n   "x": [1, 2]},\n\n  {"id": 3}\n]\n');
    const { format, records } = await readAll(path);
    expect(format).toBe('json');
    expect(records).toEqual([
      { record: 1, line: 2, value: { id: 1 } },
      { record: 2, line: 3, value: { id: 2, x: [1, 2] } },
      { record: 3, line: 6, value: { id: 3 } },
    ]);
  });

  it('yields elements that are not objects as they are (the validator judges them)', async () => {
    const { records } = await readAll(await file('[1, "two", null, [3]]'));
    expect(records.map((r) => r.value)).toEqual([1, 'two', null, [3]]);
  });

  it('accepts a byte-order mark and leading white space', async () => {
    const { records } = await readAll(await file('\uFEFF \r\n\t[{"id": 1}]'));
    expect(records).toEqual([{ record: 1, line: 2, value: { id: 1 } }]);
  });

  it('reads an empty array as no records', async () => {
    expect((await readAll(await file(' [ ] '))).records).toEqual([]);
  });

  it('reads records split across chunks exactly, whatever characters sit at the boundaries', async () => {
    const expected = trickyRecords(8_000);
    const text = JSON.stringify(expected, null, 1);
    // Several 1 MiB chunks, so record boundaries, strings and escapes straddle chunk ends.
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * 2 ** 20);
    const { records, bytes } = await readAll(await file(text));
    expect(records.map((r) => r.value)).toEqual(expected);
    expect(records.map((r) => r.record)).toEqual(expected.map((_, i) => i + 1));
    expect(bytes).toBe(Buffer.byteLength(text));
    // Pretty-printed, every element spans the same number of lines, after the `[` line.
    const linesPerRecord = JSON.stringify(expected[0], null, 1).split('\n').length;
    expect(records.map((r) => r.line)).toEqual(expected.map((_, i) => 2 + i * linesPerRecord));
  });

  it.each([
    ['[{"id": 1},]', "is not valid JSON: unexpected ']' after ',' (line 1)"],
    ['[,{"id": 1}]', "is not valid JSON: unexpected ',' (line 1)"],
    ['[{"id": 1},,{"id": 2}]', "is not valid JSON: unexpected ',' (line 1)"],
    ['[{"id": 1}\n{"id": 2}]', "is not valid JSON: expected ',' or ']' after record 1 (line 2)"],
    ['["a" "b"]', "is not valid JSON: expected ',' or ']' after record 1 (line 1)"],
    ['[{"id": 1}]\n[{"id": 2}]', 'is not valid JSON: unexpected text after the closing bracket (line 2)'],
    ['[{"id": 1},\n{"id": 2}', 'is not valid JSON: unexpected end of file: the array is not closed (line 2)'],
    ['[{"id": 1}}]', "is not valid JSON: expected ',' or ']' after record 1 (line 1)"],
    ['[\n}]', "is not valid JSON: unexpected '}' (line 2)"],
    [
      '[{"id": 1, "a": "unterminated}]',
      'is not valid JSON: unexpected end of file: the array is not closed (line 1)',
    ],
  ])('rejects broken structure %j with one line naming the place', async (content, message) => {
    const path = await file(content);
    expect(await inputError(path)).toBe(`${path} ${message}`);
  });

  it('rejects a malformed element with its record and line number', async () => {
    const path = await file('[\n{"id": 1},\n{"id": 2,}\n]');
    const message = await inputError(path);
    expect(message).toMatch(new RegExp(`^${path} is not valid JSON in record 2 \\(line 3\\): .+`));
  });
});

describe('NDJSON', () => {
  it('yields one record per non-blank line, numbered by record and by line', async () => {
    const path = await file('{"id": 1}\n\n   \n{"id": 2}\r\n{"id": 3}');
    const { format, records } = await readAll(path);
    expect(format).toBe('ndjson');
    expect(records).toEqual([
      { record: 1, line: 1, value: { id: 1 } },
      { record: 2, line: 4, value: { id: 2 } },
      { record: 3, line: 5, value: { id: 3 } },
    ]);
  });

  it('reports a line that is not JSON as that record and goes on', async () => {
    const path = await file('{"id": 1}\n{"id": 2,\n\n[1, 2\n{"id": 5}\n');
    const { records } = await readAll(path);
    expect(records.map(({ record, line, value }) => ({ record, line, value }))).toEqual([
      { record: 1, line: 1, value: { id: 1 } },
      { record: 2, line: 2, value: undefined },
      { record: 3, line: 4, value: undefined },
      { record: 4, line: 5, value: { id: 5 } },
    ]);
    expect(records[1]?.error).toMatch(/^not valid JSON: /);
    expect(records[2]?.error).toMatch(/^not valid JSON: /);
  });

  it('reads records split across chunks exactly', async () => {
    const expected = trickyRecords(10_000);
    const text = expected.map((r) => JSON.stringify(r)).join('\n');
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * 2 ** 20);
    const { records } = await readAll(await file(text));
    expect(records.map((r) => r.value)).toEqual(expected);
    expect(records.map((r) => r.line)).toEqual(expected.map((_, i) => i + 1));
  });
});

describe('oversized records', () => {
  const huge = `{"quote": "${'x'.repeat(MAX_RECORD_CHARS + 10)}"}`;

  it('an NDJSON line over the limit is reported, not held, and reading goes on', async () => {
    const { records } = await readAll(await file(`{"id": 1}\n${huge}\n{"id": 3}\n`));
    expect(records).toEqual([
      { record: 1, line: 1, value: { id: 1 } },
      { record: 2, line: 2, error: `line is longer than ${MAX_RECORD_CHARS} characters` },
      { record: 3, line: 3, value: { id: 3 } },
    ]);
  });

  it('a JSON array element over the limit is reported, not held, and reading goes on', async () => {
    const { records } = await readAll(await file(`[{"id": 1},\n${huge},\n{"id": 3}]`));
    expect(records).toEqual([
      { record: 1, line: 1, value: { id: 1 } },
      { record: 2, line: 2, error: `record is longer than ${MAX_RECORD_CHARS} characters` },
      { record: 3, line: 3, value: { id: 3 } },
    ]);
  });
});

describe('unusable files', () => {
  it('a missing file', async () => {
    const path = join(dir, 'absent.json');
    expect(await inputError(path)).toBe(`cannot open ${path}: no such file`);
  });

  it('a directory', async () => {
    const path = join(dir, 'a-directory');
    await mkdir(path);
    expect(await inputError(path)).toBe(`cannot read ${path}: it is a directory`);
  });

  it.each([
    ['', 'is empty: no records to index'],
    [' \n\t\r\n', 'is empty: no records to index'],
    ['\uFEFF', 'is empty: no records to index'],
  ])('an empty file (%j)', async (content, message) => {
    const path = await file(content);
    expect(await inputError(path)).toBe(`${path} ${message}`);
  });

  it('a file that is neither a JSON array nor NDJSON', async () => {
    const path = await file('id,author\n1,Jane Austen\n');
    expect(await inputError(path)).toBe(
      `${path} is neither a JSON array nor NDJSON: it starts with 'i', expected '[' or '{'`,
    );
  });

  it('a file that is not UTF-8', async () => {
    const path = await file(
      Buffer.concat([Buffer.from('{"author": "Bront'), Buffer.from([0xeb]), Buffer.from('"}\n')]),
    );
    expect(await inputError(path)).toBe(`${path} is not valid UTF-8 (near byte 0)`);
  });
});
