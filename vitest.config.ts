import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['service/**/*.test.ts', 'indexer/**/*.test.ts', 'loadtest/**/*.test.ts'],
    // Integration suites start real processes (redis-server, the service, the indexer CLI).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The default report, then one line per file: what ran on which server, and what skipped and why.
    reporters: ['default', './service/test-support/summary-reporter.ts'],
    // Probes once for a container runtime so the Meilisearch and compose suites can say why they skip.
    globalSetup: ['service/test-support/containers.ts'],
  },
});
