/** scripts/transpile.mjs's one export, for the TypeScript that calls it (testkit/compile-js.ts). */
export function transpile (options: { dirs: readonly string[], outdir: string, outbase: string }): Promise<void>
