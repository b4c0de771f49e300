/** The several-random-quotes suite (random-sample.suite.ts) on a real Meilisearch. */
import { inject } from 'vitest';
import { describeRandomSample } from './random-sample.suite.ts';
import { meiliBackend } from './test-support/engine-apps.ts';
import { announceSkip, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'several random quotes';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

describeRandomSample(meiliBackend(source, SUITE));
