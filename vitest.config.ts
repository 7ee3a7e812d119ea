import { defineConfig } from 'vitest/config'
import { FETCHED_NATS_SERVER } from './testkit/nats-server.js'
import { LongestFirst } from './test/sequencer.js'

/**
 * The suites whose outcome depends on how nats-server delivers, purges and restarts: they run on
 * both servers the service is tested on, the rest on the maintained one only (the suite's time).
 */
const ON_BOTH_SERVERS = [
  'test/bucket-view.test.ts',
  'test/faults.test.ts',
  'test/kv-feed.test.ts',
  'test/nats-defects.test.ts',
  'test/nats-fence.test.ts',
  'test/soak.test.ts',
  'test/views.test.ts'
]

export default defineConfig({
  test: {
    // Each project names its own files (an include here would be added to each project's).
    // Integration suites spend much of their time waiting on nats-servers and processes of their
    // own: three files at a time keep two cores busy, and less CPU goes to contention than with four
    // (on this 2-core machine, alternated: 122–141 s against 141–165 s, 197–228 against 227–261 s of
    // CPU; two files at a time left the cores idle, 139 s). Files share their worker's modules
    // (nothing in src/ or testkit/ is module state a suite sets): the suite imported fastify,
    // nats.js, typebox and the service anew per file, a third of its CPU.
    maxWorkers: 3,
    // A worker holds the modules of every file it ran and their meshes: a young generation larger
    // than V8's default collects less often what each test leaves. --expose-gc: a test of what a
    // structure holds weakly collects before it looks.
    execArgv: ['--max-semi-space-size=32', '--expose-gc'],
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The longest files start first, whichever server they run on (test/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'nats-2.10',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          // The files that start the service or a script as a process run here alone: compiled once, here.
          globalSetup: ['test/tmp-setup.ts', 'test/global-setup.ts', 'test/nats-server-setup.ts', 'test/child-js-setup.ts'],
          // Debian 13's, fetched by scripts/fetch-nats-server.sh (test/nats-server-setup.ts runs it when missing).
          env: { NATS_SERVER_BIN: process.env['NATS_SERVER_BIN'] ?? FETCHED_NATS_SERVER, NATS_SERVER_LINE: '2.10' }
        }
      },
      {
        extends: true,
        test: {
          name: 'nats-2.9',
          include: ON_BOTH_SERVERS,
          globalSetup: ['test/tmp-setup.ts', 'test/global-setup.ts', 'test/nats-server-setup.ts'],
          // Debian 12's, on the PATH (apt-get install nats-server).
          env: { NATS_SERVER_BIN: process.env['NATS_SERVER_2_9_BIN'] ?? 'nats-server', NATS_SERVER_LINE: '2.9' }
        }
      }
    ]
  }
})
