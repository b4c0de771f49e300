/**
 * The API contract suite (contract.suite.ts) on a real Meilisearch, found as every Meilisearch
 * suite finds one (test-support/meilisearch-engine.ts). The indexer builds with the indexer's key
 * and the service reads with the service's key, both as `deploy/meili-keys.ts` scopes them.
 */
import { randomBytes } from 'node:crypto';
import { Meilisearch } from 'meilisearch';
import { inject } from 'vitest';
import { indexerIndexes, keySpecs } from '../deploy/meili-keys.ts';
import { describeContract } from './contract.suite.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'HTTP contract';
const source = await meiliEngineSource(inject('containerRuntime'));

let engine: MeiliEngine | undefined;
let prefix = '';
let indexerKey = '';
let serviceKey = '';
const keyUids: string[] = [];
/** The catalogues the contract suite asks `env` for. */
const CATALOGUES = ['audit', 'live'];

describeContract({
  name: 'meilisearch',
  ...('skip' in source ? { skip: announceSkip(SUITE, source.skip) } : {}),
  async start() {
    if ('skip' in source) throw new Error(source.skip);
    engine = await source.start(SUITE);
    // Names of its own, so that a shared engine (MEILI_URL) keeps its indexes apart.
    prefix = `contract_${randomBytes(4).toString('hex')}`;
    const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
    const [indexer, service] = keySpecs(prefix);
    if (indexer === undefined || service === undefined) throw new Error('two key specs expected');
    // The suite serves two catalogues (audit, live), each the live index of its own service.
    const lives = CATALOGUES.map((name) => `${prefix}_${name}`);
    const created = await Promise.all([
      admin.createKey({
        name: `${prefix}-indexer`,
        actions: indexer.actions,
        indexes: lives.flatMap(indexerIndexes),
        expiresAt: null,
      }),
      admin.createKey({
        name: `${prefix}-service`,
        actions: service.actions,
        indexes: [`${prefix}_*`],
        expiresAt: null,
      }),
    ]);
    indexerKey = created[0].key;
    serviceKey = created[1].key;
    keyUids.push(created[0].uid, created[1].uid);
  },
  env: (name) => ({
    SEARCH_BACKEND: 'meilisearch',
    MEILI_HOST: (engine as MeiliEngine).host,
    MEILI_INDEX: `${prefix}_${name}`,
    MEILI_ADMIN_KEY: indexerKey,
    MEILI_API_KEY: serviceKey,
  }),
  async stop() {
    if (engine === undefined) return;
    try {
      const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
      const ours = (await admin.getRawIndexes({ limit: 1000 })).results.filter((i) =>
        i.uid.startsWith(prefix),
      );
      for (const { uid } of ours) await admin.deleteIndex(uid).waitTask({ timeout: 30_000 });
      for (const uid of keyUids) await admin.deleteKey(uid);
    } finally {
      await engine.stop();
    }
  },
});
