/**
 * The embedded engine writes list answers as bytes (`listJson`, sqlite/json.ts) instead of
 * objects run through the route's serialiser. These tests hold the two paths to the same bytes
 * over HTTP: for the texts held in memory and read from the file, for every envelope, projection
 * and error, and for texts that need escaping.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteCatalogue, type SqliteCatalogue } from '../catalogue/sqlite/catalogue.ts';
import { buildFixtureCatalogue, type FixtureCatalogue, fixtureApp, get } from '../test-app.ts';
import { FIXTURE_QUOTES } from '../test-support/fixtures.ts';
import {
  awkwardQuotes,
  expectAwkwardTextsParseBack,
  expectSameAnswer,
  listPaths,
  objectsOnly,
} from '../test-support/json-paths.ts';

describe('list answers written as bytes', () => {
  const quotes = [...FIXTURE_QUOTES, ...awkwardQuotes()];
  let fixture: FixtureCatalogue;
  let inMemory: SqliteCatalogue;
  let onDisk: SqliteCatalogue;
  let apps: { memory: FastifyInstance; disk: FastifyInstance; objects: FastifyInstance };
  let paths: string[];

  beforeAll(async () => {
    fixture = await buildFixtureCatalogue(quotes);
    inMemory = openSqliteCatalogue({ path: fixture.path });
    onDisk = openSqliteCatalogue({ path: fixture.path, textMemoryBytes: 0 });
    apps = {
      memory: await fixtureApp(fixture.path, {}, { catalogue: inMemory }),
      disk: await fixtureApp(fixture.path, {}, { catalogue: onDisk }),
      objects: await fixtureApp(fixture.path, {}, { catalogue: objectsOnly(onDisk) }),
    };
    paths = listPaths(quotes);
  });

  afterAll(async () => {
    await Promise.all(Object.values(apps ?? {}).map((app) => app.close()));
    await inMemory?.close();
    await onDisk?.close();
    fixture?.remove();
  });

  it('holds the texts in memory by default and on disk with a budget of 0', async () => {
    expect(await inMemory.texts()).toMatchObject({ state: 'memory' });
    expect(await onDisk.texts()).toEqual({ state: 'disk', reason: 'SQLITE_TEXT_MEMORY_MB is 0' });
  });

  it('answers every list request with the bytes the serialiser writes, from memory and from disk', async () => {
    expect(paths.length).toBeGreaterThan(300);
    let ok = 0;
    for (const path of paths) {
      const reference = await get(apps.objects, path);
      for (const app of [apps.memory, apps.disk]) {
        expectSameAnswer(path, await get(app, path), reference);
      }
      if (reference.statusCode === 200) ok++;
    }
    // The comparison covers real pages, not only errors.
    expect(ok).toBeGreaterThan(paths.length * 0.9);
  });

  it('writes escaped texts that parse back to the stored quotes', async () => {
    await expectAwkwardTextsParseBack(apps.memory);
  });
});
