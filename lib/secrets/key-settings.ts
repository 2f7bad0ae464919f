// The key that seals stored secrets, from the variables that give it: SECRET_KEY and
// SECRET_KEY_PREVIOUS, or their old names ORCHESTRATOR_SECRET_KEY and
// ORCHESTRATOR_SECRET_KEY_PREVIOUS (still read). Messages name the variable the operator set.
import type { CheckResult } from '../http/check-result.js'

export interface KeyVariables {
  SECRET_KEY?: string | undefined
  SECRET_KEY_PREVIOUS?: string | undefined
  ORCHESTRATOR_SECRET_KEY?: string | undefined
  ORCHESTRATOR_SECRET_KEY_PREVIOUS?: string | undefined
}

export interface KeySettings {
  /** The key's secret; undefined when none is set (a key file under DATA_DIR then). */
  secret: string | undefined
  /** The variable the key is read from (SECRET_KEY when none is set). */
  variable: 'SECRET_KEY' | 'ORCHESTRATOR_SECRET_KEY'
  /** The previous keys, in the order given. */
  previous: string[]
  previousVariable: 'SECRET_KEY_PREVIOUS' | 'ORCHESTRATOR_SECRET_KEY_PREVIOUS'
}

/** The keys of a *_PREVIOUS variable: comma-separated, each as the key itself is given. */
export function previousSecrets (value: string | undefined): string[] {
  return (value ?? '').split(',').map((secret) => secret.trim()).filter((secret) => secret !== '')
}

/** The key settings; a reason naming both variables when a new and an old name disagree. */
export function checkKeySettings (env: KeyVariables): CheckResult<KeySettings> {
  for (const [name, old] of [['SECRET_KEY', 'ORCHESTRATOR_SECRET_KEY'], ['SECRET_KEY_PREVIOUS', 'ORCHESTRATOR_SECRET_KEY_PREVIOUS']] as const) {
    const value = env[name]
    const oldValue = env[old]
    if (value !== undefined && oldValue !== undefined && value !== oldValue) {
      return { ok: false, reason: `${name} and ${old} (its old name) are both set, to different values: set ${name} only` }
    }
  }
  const variable = env.SECRET_KEY === undefined && env.ORCHESTRATOR_SECRET_KEY !== undefined ? 'ORCHESTRATOR_SECRET_KEY' : 'SECRET_KEY'
  // Unset, the previous keys' variable is named as the key's is.
  const previousVariable = env.SECRET_KEY_PREVIOUS !== undefined
    ? 'SECRET_KEY_PREVIOUS'
    : env.ORCHESTRATOR_SECRET_KEY_PREVIOUS !== undefined || variable === 'ORCHESTRATOR_SECRET_KEY' ? 'ORCHESTRATOR_SECRET_KEY_PREVIOUS' : 'SECRET_KEY_PREVIOUS'
  return {
    ok: true,
    value: {
      secret: env.SECRET_KEY ?? env.ORCHESTRATOR_SECRET_KEY,
      variable,
      previous: previousSecrets(env.SECRET_KEY_PREVIOUS ?? env.ORCHESTRATOR_SECRET_KEY_PREVIOUS),
      previousVariable
    }
  }
}

/** The key settings of a configuration loadConfig accepted (it checked they agree). */
export function keySettings (env: KeyVariables): KeySettings {
  const settings = checkKeySettings(env)
  if (!settings.ok) throw new Error(settings.reason)
  return settings.value
}
