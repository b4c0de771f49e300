/** The several-random-quotes suite (random-sample.suite.ts) on the embedded SQLite engine. */
import { describeRandomSample } from './random-sample.suite.ts';
import { sqliteBackend } from './test-support/engine-apps.ts';

describeRandomSample(sqliteBackend());
