// Run by tap before the test files (package.json, tap.before): every TypeScript source transpiled
// into the tests' cache, and the test database's catalogs vacuumed, side by side. Neither ever
// fails the run: a test transpiles what it misses.
await Promise.all([import('./warm-typescript-cache.mjs'), import('./vacuum-catalogs.mjs')])
