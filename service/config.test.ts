import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('SQLITE_TEXT_MEMORY_MB', () => {
  it('defaults to 64 MiB and accepts 0 (texts always read from the file)', () => {
    expect(loadConfig({}).sqliteTextMemoryBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ SQLITE_TEXT_MEMORY_MB: '0' }).sqliteTextMemoryBytes).toBe(0);
    expect(loadConfig({ SQLITE_TEXT_MEMORY_MB: '256' }).sqliteTextMemoryBytes).toBe(256 * 1024 * 1024);
  });

  it('rejects what is not a size in MiB below 4 GiB, naming the variable', () => {
    for (const bad of ['lots', '-1', '1.5', '4096']) {
      expect(() => loadConfig({ SQLITE_TEXT_MEMORY_MB: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ SQLITE_TEXT_MEMORY_MB: bad })).toThrow(
        /^SQLITE_TEXT_MEMORY_MB must be an integer from 0 to 4095/,
      );
    }
  });
});
