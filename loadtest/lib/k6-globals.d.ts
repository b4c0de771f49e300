/**
 * Globals the k6 runtime provides that @types/k6 leaves out (it assumes a DOM-like lib, which
 * would also admit browser APIs that k6 does not have).
 */
declare global {
  var console: {
    log(...values: unknown[]): void;
    info(...values: unknown[]): void;
    warn(...values: unknown[]): void;
    error(...values: unknown[]): void;
  };
}

export {};
