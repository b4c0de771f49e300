import { describe, expect, it } from 'vitest';
import { createProgressLine, createProgressLog, formatProgress } from './progress.ts';

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

describe('createProgressLine refresh', () => {
  it('redraws the last figures with the time spent finishing, once per interval', () => {
    const written: string[] = [];
    let now = 0;
    const line = createProgressLine(
      { write: (text: string) => written.push(text) },
      { intervalMs: 1000, now: () => now },
    );
    line.refresh(); // nothing to show yet
    line.update(200, 1_000, 1_000);
    now = 500;
    line.refresh(); // within the interval
    now = 3_000;
    line.refresh();
    expect(written).toEqual([
      '\rindexing: 200 records read, finishing the catalogue (0 s)\u001b[K',
      '\rindexing: 200 records read, finishing the catalogue (3 s)\u001b[K',
    ]);
  });
});

describe('createProgressLog', () => {
  it('writes whole lines at most once per interval, and nothing for a run shorter than that', () => {
    const written: string[] = [];
    let now = 0;
    const log = createProgressLog({ write: (text: string) => written.push(text) }, { now: () => now });
    now = 1_000;
    log.update(1_000, 100, 10_000);
    now = 4_999;
    log.update(4_000, 400, 10_000);
    expect(written).toEqual([]);
    now = 5_000;
    log.update(5_000, 500, 10_000);
    now = 9_000;
    log.update(9_000, 900, 10_000);
    now = 10_000;
    log.update(10_000, 1_000, 10_000);
    log.clear(); // lines stay: nothing to erase in a log
    expect(written).toEqual([
      'indexing: 5,000 records, 5% of 0.0 MB, 1,000 records/s\n',
      'indexing: 10,000 records, 10% of 0.0 MB, 1,000 records/s\n',
    ]);
  });

  it('keeps telling, every interval, that the catalogue is being finished after the file is read', () => {
    const written: string[] = [];
    let now = 0;
    const log = createProgressLog(
      { write: (text: string) => written.push(text) },
      { intervalMs: 5_000, now: () => now },
    );
    now = 6_000;
    log.update(1_000_000, 400, 400);
    for (now = 6_000; now <= 17_000; now += 1_000) log.refresh();
    expect(written).toEqual([
      'indexing: 1,000,000 records read, finishing the catalogue (6 s)\n',
      'indexing: 1,000,000 records read, finishing the catalogue (11 s)\n',
      'indexing: 1,000,000 records read, finishing the catalogue (16 s)\n',
    ]);
  });
});
