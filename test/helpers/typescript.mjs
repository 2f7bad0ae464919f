// Runs the tests and the service's sources as TypeScript (typescript-hooks.mjs), in place of tap's
// ts-node, which loads the whole TypeScript compiler into every test process and every worker
// thread. tap passes this file as --import, which worker threads inherit: each thread that loads
// it registers the hooks, so the embedded database's worker (plugins/database/embedded-worker.ts)
// loads as well.
import { register } from 'node:module'

register('./typescript-hooks.mjs', import.meta.url)
