/**
 * The container-runtime helpers the container suites use to skip, rather than fail, where a
 * Docker engine runs but an image cannot be had.
 */
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  containerRuntime,
  describeMissing,
  ensureReaper,
  missingImages,
  reaperImage,
  testcontainersUnusable,
} from './containers.ts';
import { announceSkip } from './suites.ts';

const runtime = await containerRuntime(inject('containerRuntime'));
const absent = () => `quotes-test.invalid/absent:${randomBytes(4).toString('hex')}`;

describe('testcontainersUnusable', () => {
  it('says which Node is too old, instead of the loader failure an old Node gives', () => {
    expect(testcontainersUnusable({}, 'v20.20.2')).toBe(
      "testcontainers cannot run on Node v20.20.2 (it needs Node 22.15 or later): run the tests with the project's Node (npm test)",
    );
  });

  it('finds nothing wrong on a Node whose zlib has zstd (the project pins Node 24)', () => {
    expect(
      testcontainersUnusable({ createZstdDecompress: zlib.createZstdDecompress ?? (() => {}) }, 'v24.0.0'),
    ).toBeUndefined();
  });
});

if (!runtime.available) announceSkip(import.meta.url, `the Docker engine checks: ${runtime.reason}`);

describe.skipIf(!runtime.available)('with a Docker engine', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env.TESTCONTAINERS_RYUK_DISABLED = saved.TESTCONTAINERS_RYUK_DISABLED;
    process.env.RYUK_CONTAINER_IMAGE = saved.RYUK_CONTAINER_IMAGE;
    if (saved.TESTCONTAINERS_RYUK_DISABLED === undefined) delete process.env.TESTCONTAINERS_RYUK_DISABLED;
    if (saved.RYUK_CONTAINER_IMAGE === undefined) delete process.env.RYUK_CONTAINER_IMAGE;
  });

  it('names an image that is neither present nor pullable, once, with why', async () => {
    const image = absent();
    const found = await missingImages([image, image]);
    expect(found).toEqual([{ image, reason: expect.stringMatching(/^not present, and the pull failed: ./) }]);
    expect(describeMissing(found)).toBe(`${image} (${found[0]?.reason})`);
  });

  it('turns the reaper off when its image cannot be had, saying which', async () => {
    delete process.env.TESTCONTAINERS_RYUK_DISABLED;
    process.env.RYUK_CONTAINER_IMAGE = absent();
    expect(reaperImage()).toBe(process.env.RYUK_CONTAINER_IMAGE);
    const said = await ensureReaper();
    expect(said).toMatch(new RegExp(`^reaper disabled: ${process.env.RYUK_CONTAINER_IMAGE} \\(not present`));
    expect(process.env.TESTCONTAINERS_RYUK_DISABLED).toBe('true');
  });

  it('leaves the reaper off when it is turned off already', async () => {
    process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
    expect(await ensureReaper()).toBe('reaper disabled (TESTCONTAINERS_RYUK_DISABLED)');
  });
});
