/**
 * A data file written from the contract's Quote alone, loaded by `npm run index` with no option
 * and served on each engine: every record the contract's rules allow is indexed, and each quote
 * comes back exactly as its record gave it. No `language` (the contract's Quote has none), two
 * authors whose names differ only by an accent, the same text in two works, a title under two
 * authors: a catalogue of such records is valid, however much it looks like a data-quality fault.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureKeys } from '../deploy/meili-keys.ts';
import { engineApp } from '../service/test-support/engine-apps.ts';
import {
  announceSkip,
  type MeiliEngine,
  meiliEngineSource,
} from '../service/test-support/meilisearch-engine.ts';
import { finished, startIndexer, writeDataFile } from './test-files.ts';

const SUITE = 'records of the contract on Meilisearch';
const LIVE = 'contract_records';

const record = (
  id: number,
  author: string,
  authorId: number,
  work: string,
  workId: number,
  quote: string,
) => ({
  id,
  author,
  author_id: authorId,
  work,
  work_id: workId,
  category: id % 2 === 0 ? 'fiction' : 'poetry',
  genre: id === 3 ? 'realism' : ['realism', 'satire'],
  publish_date: ['1877', '1880-02', '1885-03-02'][id % 3] as string,
  source: `https://example.org/works/${workId}`,
  quote,
});

/**
 * The contract's fields only. The indexer's data-quality checks flag record 2 (a name spelled
 * another way) and record 3 (the same quote by the same author); record 6 has record 4's text
 * by another author, and both `Poems` have sources of their own.
 */
const RECORDS = [
  record(1, 'Émile Zola', 1, "L'Assommoir", 10, 'Il faut laver son linge sale en famille.'),
  record(2, 'Emile Zola', 2, 'Germinal', 20, 'Un homme vaut un homme.'),
  record(3, 'Émile Zola', 1, 'Nana', 11, 'Il faut laver son linge sale en famille.'),
  record(4, 'Jane Austen', 3, 'Poems', 30, 'A lady’s imagination is very rapid.'),
  record(5, 'Guy de Maupassant', 4, 'Bel-Ami', 40, 'Le baiser est le plus sûr moyen de se taire.'),
  record(6, 'Guy de Maupassant', 4, 'Poems', 41, 'A lady’s imagination is very rapid.'),
];

/** Each record as the contract's Quote: its genre a list, its length computed. */
const QUOTES = RECORDS.map((r) => ({
  ...r,
  genre: typeof r.genre === 'string' ? [r.genre] : r.genre,
  quote_length: Array.from(r.quote).length,
}));

const BYPASS = { 'x-bypass-auth': 'true' };

interface Engine {
  /** The CLI's environment, and the service's. */
  indexer: Record<string, string>;
  service: Record<string, string>;
  stop(): Promise<void>;
}

const meiliSource = await meiliEngineSource(inject('containerRuntime'));
const meiliSkip = 'skip' in meiliSource ? announceSkip(SUITE, meiliSource.skip) : undefined;

const ENGINES: { name: string; skip?: string; start(dir: string): Promise<Engine> }[] = [
  {
    name: 'SQLite',
    async start(dir) {
      const env = { SEARCH_BACKEND: 'sqlite', SQLITE_PATH: join(dir, 'quotes.db') };
      return { indexer: env, service: env, stop: async () => {} };
    },
  },
  {
    name: 'Meilisearch',
    skip: meiliSkip,
    async start() {
      if ('skip' in meiliSource) throw new Error(meiliSource.skip);
      const engine: MeiliEngine = await meiliSource.start(SUITE);
      const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
      // The deployment's scoped keys: the indexer writes with its own, the service reads with its own.
      const keys = await ensureKeys(admin, LIVE);
      const common = { SEARCH_BACKEND: 'meilisearch', MEILI_HOST: engine.host, MEILI_INDEX: LIVE };
      return {
        indexer: { ...common, MEILI_ADMIN_KEY: keys.get('indexer.key') as string },
        service: { ...common, MEILI_API_KEY: keys.get('search.key') as string },
        stop: () => engine.stop(),
      };
    },
  },
];

for (const { name, skip, start } of ENGINES) {
  describe.skipIf(skip !== undefined)(
    `records of the contract on ${name}${skip ? ` (skipped: ${skip})` : ''}`,
    () => {
      let dir: string;
      let engine: Engine;
      let app: FastifyInstance;
      let indexed: { code: number | null; stdout: string; stderr: string };

      beforeAll(async () => {
        dir = await mkdtemp(join(tmpdir(), 'quotes-contract-records-'));
        engine = await start(dir);
        const file = await writeDataFile(join(dir, 'quotes.ndjson'), RECORDS, 'ndjson');
        indexed = await finished(startIndexer([file], engine.indexer));
        app = await engineApp(engine.service);
      }, 120_000);
      afterAll(async () => {
        await app?.close();
        await engine?.stop();
        if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      });

      const get = async (url: string) => {
        const response = await app.inject({ method: 'GET', url, headers: BYPASS });
        return { status: response.statusCode, body: response.json() as unknown };
      };

      it('indexes the file with no option, the data-quality faults as warnings', () => {
        expect(indexed.code, indexed.stderr).toBe(0);
        expect(indexed.stdout).toMatch(/^indexed 6 quotes into /);
        expect(indexed.stderr.split('\n').filter((line) => line.startsWith('warning: record '))).toHaveLength(
          2,
        );
      });

      it('answers each quote exactly as its record gave it, with no field the contract does not name', async () => {
        for (const quote of QUOTES) {
          expect(await get(`/quotes/${quote.id}`)).toEqual({ status: 200, body: quote });
        }
        const page = await get('/quotes?limit=100');
        expect(page.status).toBe(200);
        expect((page.body as { items: unknown[] }).items).toEqual(QUOTES);
        const random = await get('/quotes/random?author=jane+austen');
        expect(random).toEqual({ status: 200, body: QUOTES[3] });
      });

      it('keeps the two spellings of a name apart, and finds both by the folded name', async () => {
        const ids = async (url: string) =>
          ((await get(url)).body as { items: { id: number }[] }).items.map((q) => q.id);
        expect(await ids('/quotes?author=emile+zola&fields=id')).toEqual([1, 2, 3]);
        expect(await ids('/quotes?author_id=2&fields=id')).toEqual([2]);
        expect(await ids('/quotes?work=poems&fields=id')).toEqual([4, 6]);
        expect(await ids('/quotes?sort=author,id&order=desc,asc&fields=id&limit=10')).toEqual([
          4, 5, 6, 1, 2, 3,
        ]);
      });

      it('lists no language where no quote has one, and matches none by a language', async () => {
        const facets = await get('/quotes/facets?facet=language');
        expect(facets).toEqual({ status: 200, body: { total_quotes: 6, facets: { language: [] } } });
        expect((await get('/quotes?language=fr')).status).toBe(404);
        expect(await get('/quotes/1?fields=id,language')).toEqual({ status: 200, body: { id: 1 } });
      });
    },
  );
}
