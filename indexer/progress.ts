/**
 * Progress of a long indexing run: on a terminal, one line redrawn in place a few times a second;
 * elsewhere (a CI log, a file), a line every few seconds, so a run of minutes is never silent.
 */

export interface ProgressLine {
  /** Shows the new figures unless progress was shown less than the interval ago. */
  update(records: number, bytes: number, totalBytes: number): void;
  /**
   * Shows the last figures again (with the time elapsed) when the interval has passed: the backend
   * can work for minutes after the file is read, with no record to report.
   */
  refresh(): void;
  /** Erases the line so that the next output starts on a clean line. */
  clear(): void;
}

/**
 * The text of one progress line. `totalBytes` 0 means the size is unknown (no percentage). Once
 * the whole file is read, the backend may still need a while (indexes, a swap): the line says so.
 */
export function formatProgress(records: number, bytes: number, totalBytes: number, seconds: number): string {
  const count = `${records.toLocaleString('en-US')} records`;
  if (totalBytes > 0 && bytes >= totalBytes) {
    return `indexing: ${count} read, finishing the catalogue (${Math.floor(seconds)} s)`;
  }
  const parts = [`indexing: ${count}`];
  if (totalBytes > 0) {
    const percent = Math.min(100, Math.floor((bytes / totalBytes) * 100));
    parts.push(`${percent}% of ${(totalBytes / 1e6).toFixed(1)} MB`);
  }
  if (seconds > 0) parts.push(`${Math.round(records / seconds).toLocaleString('en-US')} records/s`);
  return parts.join(', ');
}

/**
 * Draws progress on `stream` (a terminal), at most once per `intervalMs`. The caller decides
 * whether a terminal is there: piped output gets no progress at all.
 */
export function createProgressLine(
  stream: { write(text: string): unknown },
  options: { intervalMs?: number; now?: () => number } = {},
): ProgressLine {
  const interval = options.intervalMs ?? 100;
  const now = options.now ?? performance.now.bind(performance);
  const started = now();
  let last = Number.NEGATIVE_INFINITY;
  let drawn = false;
  let figures: [number, number, number] | undefined;
  const line: ProgressLine = {
    update(records, bytes, totalBytes) {
      figures = [records, bytes, totalBytes];
      const t = now();
      // The end of the file is always shown: the backend may work a while after it, silently.
      const finishing = totalBytes > 0 && bytes >= totalBytes;
      if (t - last < interval && !finishing) return;
      last = t;
      drawn = true;
      // \r returns to the line start, ESC[K erases what a longer previous line left behind.
      stream.write(`\r${formatProgress(records, bytes, totalBytes, (t - started) / 1000)}\u001b[K`);
    },
    refresh() {
      if (figures !== undefined && now() - last >= interval) line.update(...figures);
    },
    clear() {
      if (!drawn) return;
      drawn = false;
      stream.write('\r\u001b[K');
    },
  };
  return line;
}

/**
 * Writes progress as whole lines to a stream that is not a terminal, one every `intervalMs`
 * (5 s by default) and none at all for a run shorter than that. The end of the file is told once,
 * then the time spent finishing, at the same pace.
 */
export function createProgressLog(
  stream: { write(text: string): unknown },
  options: { intervalMs?: number; now?: () => number } = {},
): ProgressLine {
  const interval = options.intervalMs ?? 5000;
  const now = options.now ?? performance.now.bind(performance);
  const started = now();
  let last = started;
  let figures: [number, number, number] | undefined;
  const show = (t: number) => {
    if (figures === undefined) return;
    last = t;
    stream.write(`${formatProgress(...figures, (t - started) / 1000)}\n`);
  };
  return {
    update(records, bytes, totalBytes) {
      figures = [records, bytes, totalBytes];
      const t = now();
      if (t - last >= interval) show(t);
    },
    refresh() {
      const t = now();
      if (t - last >= interval) show(t);
    },
    clear() {},
  };
}
