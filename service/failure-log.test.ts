import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { REPEAT_MS } from './failure-log.ts';
import { BYPASS } from './test-app.ts';
import { freePort } from './test-support/processes.ts';

interface Line {
  level: number;
  msg: string;
  alike?: number;
  err?: { message: string; stack?: string };
}

const WARN = 40;
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** The service on Meilisearch at a port nothing listens on: every quote request fails alike. */
async function serviceWithoutEngine() {
  const lines: Line[] = [];
  let now = Date.parse('2026-06-01T12:00:00Z');
  const app = await buildApp(
    loadConfig({
      SEARCH_BACKEND: 'meilisearch',
      MEILI_HOST: `http://127.0.0.1:${await freePort()}`,
      MEILI_API_KEY: 'service-key',
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: '1000000000',
    }),
    { logStream: { write: (line: string) => void lines.push(JSON.parse(line)) }, now: () => now },
  );
  closing.push(() => app.close());
  const failures = () => lines.filter((line) => line.level === WARN && line.err !== undefined);
  const advance = (ms: number) => {
    now += ms;
  };
  return { app, failures, advance };
}

describe('the log of repeated failures', () => {
  it('logs an engine that is down once, then once per interval with the number not logged', async () => {
    const { app, failures, advance } = await serviceWithoutEngine();
    const ask = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const response = await app.inject({ url: `/quotes?page=${i + 1}`, headers: BYPASS });
        expect(response.statusCode).toBe(503);
      }
    };
    await ask(30);
    expect(failures()).toHaveLength(1);
    expect(failures()[0]?.err?.stack).toBeDefined();
    advance(REPEAT_MS - 1);
    await ask(5);
    expect(failures()).toHaveLength(1);
    advance(1);
    await ask(1);
    expect(failures()).toHaveLength(2);
    // The 34 failures since the first line, counted in the next.
    expect(failures()[1]).toMatchObject({ alike: 34 });
    expect(failures()[1]?.msg).toMatch(/and 34 more of the same in the last 10 s, not logged/);
  });
});
