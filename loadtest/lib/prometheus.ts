/** Reading the service's Prometheus text exposition (pure, so Node tests check it). */

/**
 * The value of `process_resident_memory_bytes` (the conventional name of a process's RSS, with
 * or without labels), or undefined when the exposition does not have it.
 */
export function residentBytes(text: string): number | undefined {
  const match = /^process_resident_memory_bytes(?:\{[^}]*\})?\s+([0-9.eE+]+)\s*$/m.exec(text);
  if (match === null || match[1] === undefined) return undefined;
  const value = Number(match[1]);
  return Number.isFinite(value) ? value : undefined;
}
