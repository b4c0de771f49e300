import { describe, expect, it } from 'vitest';
import { createProgressLine, formatProgress } from './progress.ts';

describe('formatProgress', () => {
  it('shows records, share of the file and rate', () => {
    expect(formatProgress(120_000, 45_000_000, 100_000_000, 3)).toBe(
      'indexing: 120,000 records, 45% of 100.0 MB, 40,000 records/s',
    );
  });

  it('says the catalogue is being finished once the whole file is read', () => {
    expect(formatProgress(1_000_000, 400_000_000, 400_000_000, 21.7)).toBe(
      'indexing: 1,000,000 records read, finishing the catalogue (21 s)',
    );
  });

  it('leaves out the share when the size is unknown, and the rate before any time has passed', () => {
    expect(formatProgress(10, 500, 0, 0)).toBe('indexing: 10 records');
  });
});

describe('createProgressLine', () => {
  it('redraws in place at most once per interval, and clears the line at the end', () => {
    const written: string[] = [];
    let now = 0;
    const line = createProgressLine(
      { write: (text: string) => written.push(text) },
      { intervalMs: 100, now: () => now },
    );

    now = 1_000;
    line.update(100, 10, 1000);
    now = 1_050;
    line.update(200, 20, 1000); // within the interval: skipped
    now = 1_100;
    line.update(300, 30, 1000);
    line.clear();
    line.clear(); // nothing left to clear

    expect(written).toEqual([
      '\rindexing: 100 records, 1% of 0.0 MB, 100 records/s\u001b[K',
      '\rindexing: 300 records, 3% of 0.0 MB, 273 records/s\u001b[K',
      '\r\u001b[K',
    ]);
  });

  it('always draws the end of the file, even within the interval', () => {
    const written: string[] = [];
    let now = 0;
    const line = createProgressLine(
      { write: (text: string) => written.push(text) },
      { intervalMs: 100, now: () => now },
    );
    now = 1_000;
    line.update(100, 500, 1_000);
    now = 1_010;
    line.update(200, 1_000, 1_000);
    expect(written).toEqual([
      '\rindexing: 100 records, 50% of 0.0 MB, 100 records/s\u001b[K',
      '\rindexing: 200 records read, finishing the catalogue (1 s)\u001b[K',
    ]);
  });

  it('writes nothing when it never drew', () => {
    const written: string[] = [];
    createProgressLine({ write: (text: string) => written.push(text) }).clear();
    expect(written).toEqual([]);
  });
});
