// Runs the tests and the service's sources as TypeScript through tsx (esbuild, with a cache on
// disk), in place of tap's ts-node, which loads the whole TypeScript compiler into every test
// process and every worker thread. Registered in each thread that loads this file (tap passes it
// as --import, which worker threads inherit), so the embedded database's worker
// (plugins/database/embedded-worker.ts) loads as well.
import { register } from 'tsx/esm/api'

register()
