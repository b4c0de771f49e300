import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyChildLogger, RequestLogController, type RequestLogOptions } from './request-log.ts';

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  route?: string;
}

const opened: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of opened.splice(0)) await app.close();
});

/** An app with the service's logging options, whose lines are collected. */
async function appLoggingAt(
  level: string,
  onCompleted?: RequestLogOptions['onCompleted'],
): Promise<{ app: FastifyInstance; lines: Line[] }> {
  const lines: Line[] = [];
  const app = Fastify({
    logger: { level, stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    logController: new RequestLogController({ onCompleted }),
    childLoggerFactory: lazyChildLogger,
  });
  opened.push(app);
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/chatty', async (request) => {
    request.log.info({ route: 'chatty' }, 'handled at info');
    request.log.warn({ route: 'chatty' }, 'handled at warn');
    request.log.child({ step: 'inner' }).error('inner failure');
    return { ok: true };
  });
  app.get('/own-level', { logLevel: 'error' }, async (request) => {
    request.log.warn('below the route level');
    request.log.error('at the route level');
    return { ok: true };
  });
  app.get('/warns', async (request) => {
    request.log.warn('one line');
    request.log.warn('another line');
    return { ok: true };
  });
  app.get('/level', async (request) => ({ level: request.log.level }));
  app.get('/broken', async () => {
    throw new Error('boom');
  });
  await app.ready();
  return { app, lines };
}

describe('request logging', () => {
  it('writes no line for a served request at info', async () => {
    const { app, lines } = await appLoggingAt('info');
    expect((await app.inject('/quiet')).statusCode).toBe(200);
    expect(lines).toEqual([]);
  });

  it('writes the request lines at debug, bound to the request id', async () => {
    const { app, lines } = await appLoggingAt('debug');
    expect((await app.inject('/quiet')).statusCode).toBe(200);
    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [20, 'incoming request'],
      [20, 'request completed'],
    ]);
    expect(lines[0]?.req).toMatchObject({ method: 'GET', url: '/quiet' });
    expect(lines[1]?.res).toEqual({ statusCode: 200 });
    expect(lines[0]?.reqId).toMatch(/^req-/);
    expect(lines[1]?.reqId).toBe(lines[0]?.reqId);
  });

  it('writes the lines of handlers at the configured level, with the request id and their children', async () => {
    const { app, lines } = await appLoggingAt('warn');
    await app.inject('/quiet');
    await app.inject('/chatty');
    expect(lines.map(({ level, msg, route }) => [level, msg, route])).toEqual([
      [40, 'handled at warn', 'chatty'],
      [50, 'inner failure', undefined],
    ]);
    expect(lines[0]?.reqId).toBe('req-2');
    expect(lines[1]).toMatchObject({ reqId: 'req-2', step: 'inner' });
  });

  it('applies the level of a route that sets its own', async () => {
    const { app, lines } = await appLoggingAt('info');
    await app.inject('/own-level');
    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([[50, 'at the route level']]);
  });

  it('still logs a failing request at error', async () => {
    const { app, lines } = await appLoggingAt('info');
    expect((await app.inject('/broken')).statusCode).toBe(500);
    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([[50, 'boom']]);
  });

  it('builds the child logger of a request only when it writes a line', async () => {
    const { app } = await appLoggingAt('warn');
    const root = app.log;
    const makeChild = root.child.bind(root);
    let children = 0;
    root.child = (...args: Parameters<typeof root.child>) => {
      children++;
      return makeChild(...args);
    };
    await app.inject('/quiet');
    expect(children).toBe(0);
    await app.inject('/warns');
    expect(children).toBe(1);
  });

  it('hands every finished request to onCompleted once, with its final status, logged or not', async () => {
    const completed: string[] = [];
    const { app } = await appLoggingAt('silent', (request, reply) => {
      completed.push(`${request.method} ${request.url} ${reply.statusCode}`);
    });
    await app.inject('/quiet');
    await app.inject('/broken');
    await app.inject('/nowhere');
    await app.inject({ method: 'HEAD', url: '/quiet' });
    expect(completed).toEqual(['GET /quiet 200', 'GET /broken 500', 'GET /nowhere 404', 'HEAD /quiet 200']);
  });

  it('reports the level of the logger it stands for', async () => {
    const { app, lines } = await appLoggingAt('warn');
    expect((await app.inject('/level')).json()).toEqual({ level: 'warn' });
    expect(lines).toEqual([]);
  });
});
