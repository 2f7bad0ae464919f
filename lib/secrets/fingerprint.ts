// The database remembers a fingerprint of the key that seals its secrets, so that an instance
// started with another key is refused at start instead of sealing with its own (secrets then
// unreadable on the other instances, login-failure counts split between them).
//
// The fingerprint is an HMAC-SHA256 of a constant under the sealing key: it names the key
// without revealing anything that would help find it.
import { createHmac } from 'node:crypto'
import type { KeySettings } from './key-settings.js'

const FINGERPRINT_INPUT = 'netauto/secret-key-fingerprint/v1'

/** The fingerprint of a sealing key (lib/secrets/secret-box.ts deriveKey), as hex. */
export function keyFingerprint (key: Buffer): string {
  return createHmac('sha256', key).update(FINGERPRINT_INPUT).digest('hex')
}

/**
 * What a start does with the recorded fingerprint: 'record' it (none yet), 'keep' it (the current
 * key's), 'accept' it (a previous key's: a rotation under way, recorded until `npm run reseal` has
 * sealed everything under the current key), or 'refuse' to start (another key's).
 */
export type KeyVerdict = 'record' | 'keep' | 'accept' | 'refuse'

export function judgeKey (recorded: string | undefined, current: string, previous: readonly string[]): KeyVerdict {
  if (recorded === undefined) return 'record'
  if (recorded === current) return 'keep'
  return previous.includes(recorded) ? 'accept' : 'refuse'
}

/** Why an instance refuses to start: its key, or its lack of one, and the way out. */
export function refusalMessage (settings: Pick<KeySettings, 'secret' | 'variable' | 'previousVariable'>): string {
  const what = settings.secret === undefined
    ? `${settings.variable} is not set, and the key file under DATA_DIR is not the key that sealed this database's secrets`
    : `${settings.variable} is not the key that sealed this database's secrets`
  return `${what} (the database records that key's fingerprint). Every instance on one database needs the same ` +
    `${settings.variable}. To change the key, rotate it: the new key in ${settings.variable} and the old one in ` +
    `${settings.previousVariable}, then \`npm run reseal\` (docs/deploying.md, "Rotating the secret key").`
}
