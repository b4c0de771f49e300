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

describe('the development user', () => {
  it('exists only when NODE_ENV is unset, development or test (any case), and no user is configured', () => {
    for (const env of [undefined, '', 'development', 'Development', ' test ']) {
      const config = loadConfig({ NODE_ENV: env });
      expect(config.auth.usingDevelopmentUser, String(env)).toBe(true);
      expect([...config.auth.users.keys()]).toEqual(['dev']);
    }
    for (const env of ['production', 'Production', ' production ', 'PROD', 'staging']) {
      const config = loadConfig({ NODE_ENV: env });
      expect(config.auth.usingDevelopmentUser, env).toBe(false);
      expect(config.auth.users.size, env).toBe(0);
    }
    expect(loadConfig({ AUTH_USERS: 'ann:secret' }).auth.users).toEqual(new Map([['ann', 'secret']]));
  });

  it('refuses a user named twice, across AUTH_USERS entries, without echoing a password', () => {
    expect(() => loadConfig({ AUTH_USERS: 'ann:one,bob:two,ann:three' })).toThrow(
      /^AUTH_USERS entry 3 names a user defined before; each user has exactly one password$/,
    );
  });
});

describe('addresses and URLs', () => {
  it('accepts IP addresses and host names for HOST, and rejects the rest naming HOST', () => {
    for (const host of ['0.0.0.0', '127.0.0.1', '::', '::1', 'localhost', 'quotes-1.internal.example.com']) {
      expect(loadConfig({ HOST: host }).host).toBe(host);
    }
    for (const bad of ['999.1.1.1', 'not a host', '[::1]', 'under_score.example', '-lead.example']) {
      expect(() => loadConfig({ HOST: bad }), bad).toThrow(/^HOST must be an IP address .* got '/);
    }
  });

  it('reads TRUST_PROXY as a switch, a hop count, or a list of addresses, CIDRs and named ranges', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(
      loadConfig({ TRUST_PROXY: '10.0.0.0/8, Loopback ,::1,fe80::/10,192.168.0.0/255.255.0.0' }).trustProxy,
    ).toEqual(['10.0.0.0/8', 'loopback', '::1', 'fe80::/10', '192.168.0.0/255.255.0.0']);
    for (const bad of [
      'abc',
      'cafe',
      '10.0.0.0/33',
      '::/129',
      '999.999.999.999',
      '::::',
      '10.0.0.1/x',
      '1.2.3.4/8/8',
    ]) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/^TRUST_PROXY must be /);
    }
  });

  it('rejects REDIS_URL and MEILI_HOST values that are not URLs with a host, hiding passwords', () => {
    expect(loadConfig({ REDIS_URL: 'redis://:pw@redis:6379/0' }).rateLimit.redisUrl).toBe(
      'redis://:pw@redis:6379/0',
    );
    expect(loadConfig({ MEILI_HOST: 'http://meilisearch:7700/' }).meili.host).toBe('http://meilisearch:7700');
    for (const bad of [
      'redis://host:notaport',
      'redis://:::bad',
      'http://redis:6379',
      'redis://',
      'redis://h:6379/abc',
    ]) {
      expect(() => loadConfig({ REDIS_URL: bad }), bad).toThrow(
        /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/,
      );
    }
    expect(() => loadConfig({ REDIS_URL: 'redis://:secret@host:99999' })).toThrow(
      "REDIS_URL must be a redis:// or rediss:// URL with a host and at most a database number (redis://host:6379/0), got 'redis://…@host:99999'",
    );
    // Unencoded `/` and `@` in a password make the URL invalid; none of it may be echoed.
    for (const [bad, shown] of [
      ['redis://user:pa/ss@host:6379', 'redis://…@host:6379'],
      ['redis://:p@ss@host:99999', 'redis://…@host:99999'],
      ['user:s3cret@host:6379', '…@host:6379'],
    ]) {
      expect(() => loadConfig({ REDIS_URL: bad }), bad).toThrow(`got '${shown}'`);
    }
    for (const bad of ['http://host:99999', 'http://[bad', 'ftp://meili', 'meili:7700']) {
      expect(() => loadConfig({ MEILI_HOST: bad }), bad).toThrow(
        /^MEILI_HOST must be an http:\/\/ or https:\/\/ URL/,
      );
    }
  });

  it('rejects a MEILI_HOST holding a user name or password, without echoing it', () => {
    // Neither the service nor the indexer would send them (the key is MEILI_API_KEY /
    // MEILI_ADMIN_KEY), and the host is named in every engine failure that is logged.
    for (const [bad, shown] of [
      ['http://proxyuser:s3cret@meili:7700', 'http://…@meili:7700'],
      ['https://s3cret@meili.example.com', 'https://…@meili.example.com'],
      ['http://:s3cret@127.0.0.1:7700/engine', 'http://…@127.0.0.1:7700/engine'],
    ]) {
      let message = '';
      try {
        loadConfig({ MEILI_HOST: bad });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, bad).toBe(
        `MEILI_HOST must not hold a user name or password: the engine's key is MEILI_API_KEY (MEILI_ADMIN_KEY for the indexer), got '${shown}'`,
      );
    }
  });
});

describe('MEILI_DEEP_READS', () => {
  it('defaults to 4 deep pages read at once, and rejects what is not 1 to 1000, naming the variable', () => {
    expect(loadConfig({}).meili.deepReads).toBe(4);
    expect(loadConfig({ MEILI_DEEP_READS: '16' }).meili.deepReads).toBe(16);
    for (const bad of ['0', 'many', '1001']) {
      expect(() => loadConfig({ MEILI_DEEP_READS: bad }), bad).toThrow(/MEILI_DEEP_READS/);
    }
  });
});

describe('MEILI_CONNECTIONS', () => {
  it('defaults to 32 connections to the engine, and rejects what is not 2 to 1000, naming the variable', () => {
    expect(loadConfig({}).meili.connections).toBe(32);
    expect(loadConfig({ MEILI_CONNECTIONS: '64' }).meili.connections).toBe(64);
    for (const bad of ['1', 'many', '1001', '8.5']) {
      expect(() => loadConfig({ MEILI_CONNECTIONS: bad }), bad).toThrow(/MEILI_CONNECTIONS/);
    }
  });

  it('must leave a connection to the reads that are not deep pages', () => {
    expect(() => loadConfig({ MEILI_DEEP_READS: '32' })).toThrow(
      'MEILI_CONNECTIONS (32) must be more than MEILI_DEEP_READS (32), so that deep pages never hold every connection to Meilisearch',
    );
    expect(loadConfig({ MEILI_DEEP_READS: '16', MEILI_CONNECTIONS: '17' }).meili).toMatchObject({
      deepReads: 16,
      connections: 17,
    });
  });
});

describe('CORS_ORIGINS', () => {
  it('is off when unset, * for any origin, or a list of origins as browsers send them', () => {
    expect(loadConfig({}).corsOrigins).toBeUndefined();
    expect(loadConfig({ CORS_ORIGINS: ' * ' }).corsOrigins).toBe('*');
    expect(
      loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:8080,https://app.example.com' })
        .corsOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:8080']);
  });

  it('refuses what no browser sends as an Origin, naming the variable and the item', () => {
    const cases: [string, string][] = [
      [
        'https://app.example.com/',
        "got 'https://app.example.com/' (did you mean 'https://app.example.com'?)",
      ],
      ['https://App.example.com', "got 'https://App.example.com' (did you mean 'https://app.example.com'?)"],
      ['https://app.example.com:443', "(did you mean 'https://app.example.com'?)"],
      ['app.example.com', "got 'app.example.com'"],
      ['ftp://files.example.com', "got 'ftp://files.example.com'"],
      ['*,https://app.example.com', "got '*'"],
      ['https://a.example.com,,https://b.example.com', "got ''"],
      ['null', "got 'null'"],
    ];
    for (const [value, tail] of cases) {
      expect(() => loadConfig({ CORS_ORIGINS: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ CORS_ORIGINS: value }), value).toThrow(
        /^CORS_ORIGINS must be \* or comma-separated origins/,
      );
      expect(() => loadConfig({ CORS_ORIGINS: value }), value).toThrow(tail);
    }
  });

  it('never echoes credentials written into an origin', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://ann:secret@app.example.com' })).toThrow(
      /^(?!.*secret).*got 'https:\/\/…@app\.example\.com'/,
    );
  });
});
