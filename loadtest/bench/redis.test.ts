import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from '../../service/test-support/redis-server.ts';
import { needsRedisServer } from '../../service/test-support/suites.ts';
import { freePort } from './processes.ts';
import { scriptCalls } from './redis.ts';

describe.runIf(needsRedisServer(import.meta.url))('scriptCalls', () => {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await client.connect();
  });
  afterAll(async () => {
    client.disconnect();
    await server.close();
  });

  it('counts the EVAL and EVALSHA calls the server ran, and nothing else', async () => {
    const before = await scriptCalls(server.port);
    expect(before).toBeTypeOf('number');
    const sha = (await client.script('LOAD', 'return 1')) as string;
    await client.evalsha(sha, 0);
    await client.evalsha(sha, 0);
    await client.eval('return 2', 0);
    await client.get('not-a-script');
    expect(await scriptCalls(server.port)).toBe((before as number) + 3);
  });

  it('is undefined when nothing answers on the port', async () => {
    expect(await scriptCalls(await freePort())).toBeUndefined();
  });
});
