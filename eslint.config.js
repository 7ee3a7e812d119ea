import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', 'openapi/**', '.bench-tmp/**', '.scratch/**', '.cache/**', 'clients/typescript/openapi.ts', 'clients/typescript/asyncapi.ts'] }),
  {
    rules: {
      // A typebox schema and its Static<> type share one name on purpose (one source of truth).
      '@typescript-eslint/no-redeclare': 'off',
      // `void promise` marks a deliberate fire-and-forget whose errors are handled inside.
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  {
    // A function a reader takes in whole: one longer than a screen is cut into named steps.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      'max-lines-per-function': ['error', 60]
    }
  },
  {
    // The page at GET / runs in a browser: the names of the browser it uses.
    files: ['src/http/page/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(['document', 'window', 'location', 'sessionStorage', 'EventSource', 'requestAnimationFrame'].map((name) => [name, 'readonly']))
    }
  }
]
