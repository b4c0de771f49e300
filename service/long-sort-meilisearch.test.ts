/** The suite of sorts of long text values (long-sort.suite.ts) on a real Meilisearch. */
import { inject } from 'vitest';
import { describeLongSorts } from './long-sort.suite.ts';
import { meiliBackend } from './test-support/engine-apps.ts';
import { announceSkip, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'sorts of long text values';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

describeLongSorts(meiliBackend(source, SUITE));
