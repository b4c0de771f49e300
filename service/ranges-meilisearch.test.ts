/** The range filter suite (ranges.suite.ts) on a real Meilisearch. */
import { inject } from 'vitest';
import { describeRanges } from './ranges.suite.ts';
import { meiliBackend } from './test-support/engine-apps.ts';
import { announceSkip, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'range filters';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

describeRanges(meiliBackend(source, SUITE));
