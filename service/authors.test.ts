/** The authors and works suite (authors.suite.ts) on the embedded SQLite engine. */
import { describeDirectory } from './authors.suite.ts';
import { buildFixtureCatalogue, fixtureApp } from './test-app.ts';

describeDirectory('sqlite', async (quotes) => {
  const catalogue = await buildFixtureCatalogue(quotes);
  const app = await fixtureApp(catalogue.path);
  return {
    app,
    async close() {
      await app.close();
      catalogue.remove();
    },
  };
});
