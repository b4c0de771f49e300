/** The API contract suite (contract.suite.ts) on the embedded SQLite engine. */
import { join } from 'node:path';
import { describeContract } from './contract.suite.ts';

let dir = '';

describeContract({
  name: 'sqlite',
  async start(suiteDir) {
    dir = suiteDir;
  },
  env: (name) => ({ SQLITE_PATH: join(dir, `${name}.db`) }),
  async stop() {},
});
