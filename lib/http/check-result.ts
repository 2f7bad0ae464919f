/** The outcome of checking an input: the accepted (possibly normalised) value, or why not (for a 400). */
export type CheckResult<T> = { ok: true, value: T } | { ok: false, reason: string }
