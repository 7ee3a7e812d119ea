import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Integration suites each start their own nats-server; two cores take two at a time.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
