// The platform names bundles YEAR.FEATURE.MAINTENANCE, alone ("2023.2.3") or as the suffix of a
// product version ("3.102.0-2023.1.38"). A bundle is a maintenance bundle when MAINTENANCE > 0.

export interface BundleVersion {
  year: number
  feature: number
  maintenance: number
}

const TRIPLE = /^(\d{1,9})\.(\d{1,9})\.(\d{1,9})$/

/** Parses the bundle part of a version string, or returns undefined when it has none. */
export function parseBundleVersion (version: string): BundleVersion | undefined {
  const text = version.trim()
  // The bundle is the suffix after the last '-' when that suffix is a triple, else the whole string.
  const dash = text.lastIndexOf('-')
  const match = TRIPLE.exec(dash >= 0 ? text.slice(dash + 1) : text)
  if (match === null) return undefined
  return { year: Number(match[1]), feature: Number(match[2]), maintenance: Number(match[3]) }
}

/** True when `version` names a maintenance bundle; `override`, when set, wins. */
export function isMaintenanceBundle (version: string, override?: boolean): boolean {
  if (override !== undefined) return override
  const bundle = parseBundleVersion(version)
  return bundle !== undefined && bundle.maintenance > 0
}
