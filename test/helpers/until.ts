// Waiting for a condition instead of sleeping a fixed time: a busy machine makes any fixed time
// too short some day, and a quiet one makes it too long every day.
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'

/**
 * Resolves once `holds` is true, looking again on every turn of the event loop for the first few
 * tries and then every few milliseconds; rejects naming `what` when `timeoutMs` passes first.
 */
export async function until (holds: () => boolean | Promise<boolean>, what = 'the condition', timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (let tries = 0; !(await holds()); tries++) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    if (tries < 20) await nextTurn()
    else await sleep(5)
  }
}
