import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureCatalogue, generatorDigest } from './catalogue.ts';

/** A project root whose generator writes `--count` lines saying which generator wrote them. */
function fakeRoot(mark: string): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-catalogue-'));
  mkdirSync(join(root, 'indexer'));
  writeFileSync(
    join(root, 'indexer/generate.ts'),
    `import { writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
const count = Number(args[args.indexOf('--count') + 1]);
writeFileSync(args[args.indexOf('--out') + 1], '${mark}\\n'.repeat(count));
`,
  );
  return root;
}

describe('the benchmark catalogue cache', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  it('reuses a catalogue of the same generator, and never one of a changed generator', async () => {
    const root = fakeRoot('first');
    roots.push(root);
    const cache = join(root, 'cache');
    const made = await ensureCatalogue(root, cache, 3, 1, process.env);
    expect(made.generateSeconds).not.toBeNull();
    expect(readFileSync(made.file, 'utf8')).toBe('first\n'.repeat(3));
    const reused = await ensureCatalogue(root, cache, 3, 1, process.env);
    expect(reused).toMatchObject({ file: made.file, generateSeconds: null });

    // The generator changes (a module beside it too): the cached file is not reused.
    const before = generatorDigest(root);
    mkdirSync(join(root, 'indexer/generate'));
    writeFileSync(join(root, 'indexer/generate/words.ts'), 'export const WORDS = [];\n');
    expect(generatorDigest(root)).not.toBe(before);
    writeFileSync(
      join(root, 'indexer/generate.ts'),
      readFileSync(join(root, 'indexer/generate.ts'), 'utf8').replace('first', 'second'),
    );
    const regenerated = await ensureCatalogue(root, cache, 3, 1, process.env);
    expect(regenerated.file).not.toBe(made.file);
    expect(regenerated.generateSeconds).not.toBeNull();
    expect(readFileSync(regenerated.file, 'utf8')).toBe('second\n'.repeat(3));
  });
});
