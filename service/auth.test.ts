import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, WWW_AUTHENTICATE } from './auth.ts';
import { MAX_LOGGED_HOST } from './request-log.ts';
import {
  basic,
  buildFixtureCatalogue,
  errorOf,
  type FixtureCatalogue,
  fixtureApp,
  rawHttp,
} from './test-app.ts';

let catalogue: FixtureCatalogue;
let allow: FastifyInstance;
let deny: FastifyInstance;
const USERS = 'alice:s3cret,bob:pa:ss:word';

beforeAll(async () => {
  catalogue = await buildFixtureCatalogue();
  allow = await fixtureApp(catalogue.path, { AUTH_USERS: USERS });
  deny = await fixtureApp(catalogue.path, { AUTH_USERS: USERS, AUTH_BYPASS: 'deny' });
});
afterAll(async () => {
  await allow?.close();
  await deny?.close();
  catalogue?.remove();
});

const request = (app: FastifyInstance, headers: Record<string, string>, url = '/quotes?limit=1') =>
  app.inject({ method: 'GET', url, headers });

/** Expects a 401 with the given identifier and the WWW-Authenticate challenge. */
async function expect401(
  app: FastifyInstance,
  headers: Record<string, string>,
  error: string,
  details: RegExp,
) {
  const response = await request(app, headers);
  expect(response.statusCode).toBe(401);
  expect(response.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
  expect(response.headers['cache-control']).toBe('no-store');
  const body = errorOf(response);
  expect(body.error).toBe(error);
  expect(body.details).toMatch(details);
}

async function expectServed(app: FastifyInstance, headers: Record<string, string>) {
  const response = await request(app, headers);
  expect(response.statusCode).toBe(200);
  expect(response.json().items.map((q: { id: number }) => q.id)).toEqual([1]);
  expect(response.headers['www-authenticate']).toBeUndefined();
}

describe('Basic authentication (AUTH_BYPASS=allow)', () => {
  it('serves valid credentials, including a password that contains colons and a lower-case scheme', async () => {
    await expectServed(allow, { authorization: basic('alice:s3cret') });
    await expectServed(allow, { authorization: basic('bob:pa:ss:word') });
    await expectServed(allow, { authorization: basic('alice:s3cret').replace('Basic', 'basic') });
    // Unpadded base64 of the same credentials.
    await expectServed(allow, { authorization: basic('alice:s3cret').replace(/=+$/, '') });
  });

  it('answers 401 unauthorized without an Authorization header', async () => {
    await expect401(allow, {}, 'unauthorized', /Authentication required: send Authorization: Basic/);
  });

  it('answers 401 unauthorized for a scheme other than Basic, quoting no part of the value', async () => {
    const details =
      /^Authorization must use the Basic scheme: send Authorization: Basic base64\(name:password\)$/;
    // A missing scheme makes the credentials themselves the first word: none of it is repeated.
    for (const value of [
      'Bearer abc.def',
      'Digest',
      'alice:s3cret',
      'alice:s3cret Basic',
      'Basicalice:s3cret',
    ]) {
      await expect401(allow, { authorization: value }, 'unauthorized', details);
    }
  });

  it('answers 401 invalid_credentials for a value that is not base64', async () => {
    for (const value of [
      'Basic !!!!',
      'Basic YWxpY2U6czNjcmV0*',
      'Basic a',
      'Basic YQ=a',
      'Basic YWxpY2U6czNjcmV0=',
    ]) {
      await expect401(allow, { authorization: value }, 'invalid_credentials', /not valid base64/);
    }
  });

  it('answers 401 invalid_credentials when the decoded text has no colon', async () => {
    await expect401(
      allow,
      { authorization: basic('alice') },
      'invalid_credentials',
      /must be base64 of name:password/,
    );
    await expect401(allow, { authorization: 'Basic' }, 'invalid_credentials', /name:password/);
    await expect401(allow, { authorization: 'Basic ' }, 'invalid_credentials', /name:password/);
  });

  it('answers 401 invalid_credentials for bytes that are not UTF-8 text', async () => {
    const value = `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}`;
    await expect401(allow, { authorization: value }, 'invalid_credentials', /not valid UTF-8/);
  });

  it('answers 401 unauthorized, with one message, for a wrong password and an unknown user', async () => {
    await expect401(
      allow,
      { authorization: basic('alice:wrong') },
      'unauthorized',
      /^Unknown user or wrong password$/,
    );
    await expect401(
      allow,
      { authorization: basic('mallory:s3cret') },
      'unauthorized',
      /^Unknown user or wrong password$/,
    );
    await expect401(
      allow,
      { authorization: basic(':s3cret') },
      'unauthorized',
      /^Unknown user or wrong password$/,
    );
    await expect401(
      allow,
      { authorization: basic('alice:') },
      'unauthorized',
      /^Unknown user or wrong password$/,
    );
    // The development user exists only when no users are configured.
    await expect401(
      allow,
      { authorization: basic('dev:dev') },
      'unauthorized',
      /^Unknown user or wrong password$/,
    );
  });

  it('skips the check for X-Bypass-Auth: true in any case, and ignores other values', async () => {
    await expectServed(allow, { 'x-bypass-auth': 'true' });
    await expectServed(allow, { 'x-bypass-auth': 'TRUE' });
    await expectServed(allow, { 'x-bypass-auth': 'True' });
    await expect401(allow, { 'x-bypass-auth': 'false' }, 'unauthorized', /Authentication required/);
    await expect401(allow, { 'x-bypass-auth': '1' }, 'unauthorized', /Authentication required/);
    await expect401(allow, { 'x-bypass-auth': 'yes' }, 'unauthorized', /Authentication required/);
  });

  it('lets bypass win over bad credentials when both are sent', async () => {
    await expectServed(allow, { 'x-bypass-auth': 'true', authorization: basic('alice:wrong') });
    await expectServed(allow, { 'x-bypass-auth': 'true', authorization: 'Basic !!!' });
  });
});

describe('AUTH_BYPASS=deny', () => {
  it('answers 403 forbidden to X-Bypass-Auth: true without valid credentials', async () => {
    const cases: Record<string, string>[] = [
      { 'x-bypass-auth': 'true' },
      { 'x-bypass-auth': 'TRUE', authorization: basic('alice:wrong') },
      { 'x-bypass-auth': 'true', authorization: 'Basic !!!' },
      { 'x-bypass-auth': 'true', authorization: 'Bearer x' },
    ];
    for (const headers of cases) {
      const response = await request(deny, headers);
      expect(response.statusCode).toBe(403);
      expect(errorOf(response)).toEqual({
        code: 403,
        error: 'forbidden',
        details:
          'X-Bypass-Auth is disabled on this server (AUTH_BYPASS=deny); send valid Basic credentials instead',
      });
      expect(response.headers['www-authenticate']).toBeUndefined();
    }
  });

  it('serves X-Bypass-Auth: true with valid credentials, and valid credentials alone', async () => {
    await expectServed(deny, { 'x-bypass-auth': 'true', authorization: basic('alice:s3cret') });
    await expectServed(deny, { authorization: basic('alice:s3cret') });
  });

  it('still answers 401 when no bypass is asked for', async () => {
    await expect401(deny, {}, 'unauthorized', /Authentication required/);
    await expect401(deny, { 'x-bypass-auth': 'false' }, 'unauthorized', /Authentication required/);
    await expect401(deny, { authorization: 'Basic !!!' }, 'invalid_credentials', /base64/);
  });
});

describe('what authentication covers', () => {
  it('guards every quote path, including their parameter errors and 404s', async () => {
    for (const url of [
      '/quotes',
      '/quotes/random',
      '/quotes/5',
      '/quotes/abc',
      '/quotes?limit=ten',
      '/api/v1/quotes',
    ]) {
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await allow.inject({ method, url });
        expect(response.statusCode, `${method} ${url}`).toBe(401);
        expect(response.headers['www-authenticate'], url).toBe(WWW_AUTHENTICATE);
        if (method === 'GET') expect(errorOf(response).error).toBe('unauthorized');
      }
    }
  });

  it('checks credentials before parameters, and parameters before data', async () => {
    const auth = { authorization: basic('alice:s3cret') };
    expect((await request(allow, {}, '/quotes?limit=ten&author=nobody')).statusCode).toBe(401);
    expect((await request(deny, { 'x-bypass-auth': 'true' }, '/quotes?limit=ten')).statusCode).toBe(403);
    expect((await request(allow, auth, '/quotes?limit=ten&author=nobody')).statusCode).toBe(400);
    expect((await request(allow, auth, '/quotes?author=nobody')).statusCode).toBe(404);
  });

  it('leaves /health, /ready, the docs and unknown paths open', async () => {
    expect((await request(deny, {}, '/health')).statusCode).toBe(200);
    expect((await request(deny, {}, '/ready')).statusCode).toBe(200);
    expect((await request(deny, {}, '/openapi.json')).statusCode).toBe(200);
    expect((await request(deny, {}, '/nowhere')).statusCode).toBe(404);
    expect((await deny.inject({ method: 'DELETE', url: '/quotes' })).statusCode).toBe(405);
  });
});

describe('configured users', () => {
  it('accepts the development user dev:dev only when no users are configured outside production', async () => {
    const dev = await fixtureApp(catalogue.path);
    try {
      await expectServed(dev, { authorization: basic('dev:dev') });
      await expect401(dev, { authorization: basic('dev:wrong') }, 'unauthorized', /wrong password/);
    } finally {
      await dev.close();
    }
    const production = await fixtureApp(catalogue.path, {
      NODE_ENV: 'production',
      AUTH_USERS: 'ops:long-secret',
    });
    try {
      await expect401(production, { authorization: basic('dev:dev') }, 'unauthorized', /wrong password/);
      await expectServed(production, { authorization: basic('ops:long-secret') });
    } finally {
      await production.close();
    }
  });

  it('reads users from AUTH_USERS_FILE as well as AUTH_USERS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quotes-users-'));
    const file = join(dir, 'users');
    writeFileSync(file, '# operators\ncarol:from-file\n\n');
    const app = await fixtureApp(catalogue.path, { AUTH_USERS: 'alice:s3cret', AUTH_USERS_FILE: file });
    try {
      await expectServed(app, { authorization: basic('carol:from-file') });
      await expectServed(app, { authorization: basic('alice:s3cret') });
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('valid credentials remembered between requests', () => {
  const withHeaders = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;
  const statusOf = (failure: { statusCode: number } | undefined) => failure?.statusCode ?? 200;

  it('keeps every verdict right once values are remembered, past the bound of remembered values', () => {
    const users = new Map<string, string>();
    for (let i = 0; i < 600; i++) users.set(`user${i}`, `password-${i}`);
    const authenticate = createAuthenticator({ users, bypass: 'deny', usingDevelopmentUser: false });
    const verdicts = (password: (i: number) => string) =>
      [...users.keys()].map((name, i) =>
        statusOf(authenticate(withHeaders({ authorization: basic(`${name}:${password(i)}`) }))),
      );
    // Twice over more users than are remembered: the second pass sees evicted and kept values.
    for (let pass = 0; pass < 2; pass++) {
      expect(new Set(verdicts((i) => `password-${i}`))).toEqual(new Set([200]));
      expect(new Set(verdicts((i) => `password-${i}x`))).toEqual(new Set([401]));
      expect(new Set(verdicts((i) => `password-${(i + 1) % 600}`))).toEqual(new Set([401]));
    }
  });

  it('still answers 403 to a refused bypass, and 401 to a header that differs from a valid one', () => {
    const authenticate = createAuthenticator({
      users: new Map([['alice', 's3cret']]),
      bypass: 'deny',
      usingDevelopmentUser: false,
    });
    const valid = basic('alice:s3cret');
    expect(statusOf(authenticate(withHeaders({ authorization: valid })))).toBe(200);
    expect(statusOf(authenticate(withHeaders({ authorization: valid, 'x-bypass-auth': 'true' })))).toBe(200);
    expect(statusOf(authenticate(withHeaders({ 'x-bypass-auth': 'true' })))).toBe(403);
    expect(statusOf(authenticate(withHeaders({ authorization: `${valid}x` })))).toBe(401);
    expect(statusOf(authenticate(withHeaders({ authorization: basic('alice:s3cre') })))).toBe(401);
    expect(statusOf(authenticate(withHeaders({})))).toBe(401);
  });
});

describe('logs', () => {
  /** An app with USERS whose log lines, at `level`, are kept in `lines`. */
  async function loggingApp(level: string): Promise<{ app: FastifyInstance; lines: string[] }> {
    const lines: string[] = [];
    const app = await fixtureApp(
      catalogue.path,
      { AUTH_USERS: USERS, LOG_LEVEL: level },
      { logStream: { write: (line: string) => void lines.push(line) } },
    );
    return { app, lines };
  }

  it('never contain credentials, and redact them where a header object is logged', async () => {
    const { app, lines } = await loggingApp('trace');
    try {
      const header = basic('alice:s3cret');
      await request(app, { authorization: header });
      await request(app, { authorization: basic('alice:wrong-guess') });
      await request(app, { authorization: basic('alice:s3cret') }, '/nowhere');
      app.log.info({ req: { headers: { authorization: header } } }, 'a plugin logging headers');
      app.log.info(
        { headers: { authorization: header, 'proxy-authorization': 'Basic cHJveHk=', 'x-api-key': 'k3y' } },
        'raw headers',
      );
      const all = lines.join('');
      expect(lines.length).toBeGreaterThan(5);
      for (const secret of ['s3cret', 'wrong-guess', header.slice(6), 'pa:ss:word', 'k3y', 'cHJveHk']) {
        expect(all).not.toContain(secret);
      }
      const raw = JSON.parse(lines.find((line) => line.includes('raw headers')) ?? '{}');
      expect(raw.headers).toEqual({
        authorization: '[redacted]',
        'proxy-authorization': '[redacted]',
        'x-api-key': '[redacted]',
      });
    } finally {
      await app.close();
    }
  });

  it('log the Host header without its user information, and cut to a bounded length', async () => {
    const { app, lines } = await loggingApp('debug');
    try {
      const { port } = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
      const send = (host: string) =>
        rawHttp(
          Number(port),
          `GET /quotes/1?fields=id HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\nX-Bypass-Auth: true\r\n\r\n`,
        );
      expect(await send('alice:s3cret@quotes.example:8080')).toMatch(/^HTTP\/1\.1 200 /);
      expect(await send(`${'h'.repeat(10_000)}.example`)).toMatch(/^HTTP\/1\.1 200 /);
      const hosts = lines
        .filter((line) => line.includes('incoming request'))
        .map((line) => JSON.parse(line).req.host as string);
      expect(hosts).toEqual([`[redacted]@quotes.example:8080`, `${'h'.repeat(MAX_LOGGED_HOST)}…`]);
      expect(lines.join('')).not.toContain('s3cret');
    } finally {
      await app.close();
    }
  });

  it('never quote a malformed Authorization value, in answers or in log lines', async () => {
    const { app, lines } = await loggingApp('trace');
    try {
      const answers: string[] = [];
      for (const value of [
        'alice:s3cret',
        'Bearer s3cret',
        `s3cret${'x'.repeat(40)}`,
        'Basic s3cret!',
        'Basic',
      ]) {
        const response = await request(app, { authorization: value });
        expect(response.statusCode, value).toBe(401);
        answers.push(response.body);
      }
      expect(lines.length).toBeGreaterThan(5);
      const all = lines.join('') + answers.join('');
      for (const part of ['s3cret', 'alice', 'Bearer']) expect(all).not.toContain(part);
    } finally {
      await app.close();
    }
  });

  it('never contain the credentials of an absolute-form request target, nor do answers', async () => {
    const { app, lines } = await loggingApp('debug');
    try {
      const { port } = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
      // Sent over a socket: app.inject would parse the target itself, not as the server does.
      const send = (target: string) =>
        rawHttp(
          Number(port),
          `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Bypass-Auth: true\r\n\r\n`,
        );
      const served = await send(`http://alice:s3cret@127.0.0.1:${port}/quotes/1?fields=id`);
      expect(served).toMatch(/^HTTP\/1\.1 200 /);
      const unknown = await send(`http://alice:s3cret@127.0.0.1:${port}/nowhere`);
      expect(unknown).toMatch(/^HTTP\/1\.1 404 /);
      expect(unknown).toContain(`No resource at http://[redacted]@127.0.0.1:${port}/nowhere`);
      const logged = lines.filter((line) => line.includes('incoming request'));
      expect(logged).toHaveLength(2);
      expect(JSON.parse(logged[0] ?? '{}').req.url).toBe(
        `http://[redacted]@127.0.0.1:${port}/quotes/1?fields=id`,
      );
      expect(lines.join('') + served + unknown).not.toContain('s3cret');
    } finally {
      await app.close();
    }
  });
});
