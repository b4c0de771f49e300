/** A one-line progress display for terminals, redrawn in place at most a few times a second. */

export interface ProgressLine {
  /** Redraws the line unless it was drawn less than the interval ago. */
  update(records: number, bytes: number, totalBytes: number): void;
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
  return {
    update(records, bytes, totalBytes) {
      const t = now();
      // The end of the file is always shown: the backend may work a while after it, silently.
      const finishing = totalBytes > 0 && bytes >= totalBytes;
      if (t - last < interval && !finishing) return;
      last = t;
      drawn = true;
      // \r returns to the line start, ESC[K erases what a longer previous line left behind.
      stream.write(`\r${formatProgress(records, bytes, totalBytes, (t - started) / 1000)}\u001b[K`);
    },
    clear() {
      if (!drawn) return;
      drawn = false;
      stream.write('\r\u001b[K');
    },
  };
}
