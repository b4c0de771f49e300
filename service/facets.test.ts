/** The facet suite (facets.suite.ts) on the embedded SQLite engine. */
import { describeFacets } from './facets.suite.ts';
import { buildFixtureCatalogue, fixtureApp } from './test-app.ts';

describeFacets('sqlite', async (quotes) => {
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
