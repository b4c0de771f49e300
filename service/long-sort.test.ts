/** The suite of sorts of long text values (long-sort.suite.ts) on the embedded SQLite engine. */
import { describeLongSorts } from './long-sort.suite.ts';
import { sqliteBackend } from './test-support/engine-apps.ts';

describeLongSorts(sqliteBackend());
