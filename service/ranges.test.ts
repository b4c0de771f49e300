/** The range filter suite (ranges.suite.ts) on the embedded SQLite engine. */
import { describeRanges } from './ranges.suite.ts';
import { sqliteBackend } from './test-support/engine-apps.ts';

describeRanges(sqliteBackend());
