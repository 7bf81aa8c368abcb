import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // PGlite is WASM in each worker: forks isolate them; 2 workers fit the 2-core CI machine.
    pool: 'forks',
    maxWorkers: 2,
    // Building the PGlite template on a cold cache runs initdb once (several seconds).
    hookTimeout: 60_000,
    testTimeout: 15_000,
    allowOnly: false,
  },
});
