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
    // typebox's values come from src/vendor/typebox.ts, which the build bundles: an import of the
    // library itself would load its ~540 modules at every start again. Its types are erased.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/vendor/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: '^typebox(/|$)', allowTypeImports: true, message: "import typebox's values from src/vendor/typebox.ts (bundled by the build); only types from 'typebox' itself" }]
      }]
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
