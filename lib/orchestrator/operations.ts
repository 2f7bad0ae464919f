// The typed operations of the platform's NSO Manager as thin translations to NSO's RESTCONF and
// JSON-RPC: the request each sends (paths, bodies) and what each takes from NSO's documents, pure;
// reading the answers themselves (JSON, NSO's errors) is lib/orchestrator/upstream.ts's. The
// plugin (plugins/orchestrator/operations.ts) sends them; docs/orchestrator.md says why each
// answer has its shape.
import { yangMember } from './upstream.js'

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

const DATA = '/restconf/data/tailf-ncs:devices'
export const YANG_DATA_JSON = 'application/yang-data+json'

/** Devices' names, NED ids and auth groups' names: only the key leaf of each entry is asked for. */
export const DEVICE_NAMES_PATH = `${DATA}/device?fields=name`
export const NED_IDS_PATH = `${DATA}/ned-ids/ned-id?fields=id`
export const AUTH_GROUPS_PATH = `${DATA}/authgroups/group?fields=name`
export const ADD_LOCK_PATH = `${DATA}/commit-queue/add-lock`

/** A device's resource: its name percent-encoded whole (`/`, `,`, `=` too), so it stays one key. */
export function devicePath (device: string): string {
  return `${DATA}/device=${encodeKey(device)}`
}

/** RFC 8040 3.5.3: a key value with every character outside the unreserved set percent-encoded. */
export function encodeKey (value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** Where a device is looked for (its name only). */
export const deviceLookupPath = (device: string): string => `${devicePath(device)}?fields=name`
export const deviceTypePath = (device: string): string => `${devicePath(device)}/device-type`
export const connectPath = (device: string): string => `${devicePath(device)}/connect`
export const applyTemplatePath = (device: string): string => `${devicePath(device)}/apply-template`
export const execAnyPath = (device: string, statsModule: string): string => `${devicePath(device)}/live-status/${statsModule}:exec/any`

/**
 * The `leaf` of each entry of list `list` in a RESTCONF answer (`{"tailf-ncs:device":[{"name":
 * "ce0"}, ...]}`), as strings; an empty answer (NSO's 204) is no entries.
 */
export function listLeaves (document: unknown, list: string, leaf: string): string[] {
  const entries = yangMember(document, list)
  if (!Array.isArray(entries)) return []
  const values: string[] = []
  for (const entry of entries) {
    const value = isObject(entry) ? entry[leaf] : undefined
    if (typeof value === 'string' || typeof value === 'number') values.push(String(value))
  }
  return values
}

/** Sorted (by code point), each once. */
export function sortedUnique (values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The names that contain `substring`, ignoring case; sorted, each once. */
export function filterNames (names: Iterable<string>, substring: string): string[] {
  const needle = substring.toLowerCase()
  return sortedUnique([...names].filter((name) => name.toLowerCase().includes(needle)))
}

/** The NED id of a device-type answer (`{"tailf-ncs:device-type":{"cli":{"ned-id":"..."}}}`). */
export function nedIdOf (document: unknown): string | undefined {
  const type = yangMember(document, 'device-type')
  if (!isObject(type)) return undefined
  for (const kind of ['cli', 'netconf', 'generic', 'snmp']) {
    const ned = yangMember(type[kind] ?? yangMember(type, kind), 'ned-id')
    if (typeof ned === 'string') return ned
  }
  return undefined
}

// The live-status module of the NEDs whose `exec any` runs a show command. Order matters: IOS XR
// and NX-OS NED ids contain "ios" or "nx" words that a looser match would take for IOS.
const STATS_MODULES: ReadonlyArray<[RegExp, string]> = [
  [/ios-?xr/i, 'tailf-ned-cisco-ios-xr-stats'],
  [/(^|[^a-z])nx([^a-z]|$)|nx-id|cisco-nx/i, 'tailf-ned-cisco-nx-stats'],
  [/asa/i, 'tailf-ned-cisco-asa-stats'],
  [/ios/i, 'tailf-ned-cisco-ios-stats']
]

/** The live-status stats module of a NED id (`cisco-ios-cli-6.44:cisco-ios-cli-6.44`), if it has one. */
export function statsModuleOf (nedId: string): string | undefined {
  return STATS_MODULES.find(([pattern]) => pattern.test(nedId))?.[1]
}

export const execAnyBody = (command: string): string => JSON.stringify({ input: { args: command } })

/** The output of an action's answer (`{"tailf-ncs:output": {...}}`); undefined when it had none (204). */
export function actionOutput (document: unknown): Record<string, unknown> | undefined {
  const output = yangMember(document, 'output')
  return isObject(output) ? output : undefined
}

/**
 * What an apply-template output says went wrong, if anything: NSO 6.x answers
 * `{"apply-template-result":[{device, result: "ok" | "no-namespace", info?}]}` (200) and a result
 * other than `ok` means nothing was applied; NSO 5.x answers no output (204) on success.
 */
export function templateProblem (output: Record<string, unknown> | undefined): string | undefined {
  const results = output?.['apply-template-result']
  for (const entry of Array.isArray(results) ? results : []) {
    const result = isObject(entry) ? entry.result : undefined
    if (result !== undefined && result !== 'ok') {
      const info = isObject(entry) ? entry.info : undefined
      return typeof info === 'string' ? `${String(result)}: ${info}` : String(result)
    }
  }
  return undefined
}

/** A value as an XPath 1.0 string literal: NSO evaluates template variables as XPath. */
export function xpathLiteral (value: string): string {
  if (!value.includes("'")) return `'${value}'`
  if (!value.includes('"')) return `"${value}"`
  // Both quotes: concat() of pieces, each quote in the other kind.
  const parts = value.split("'").map((piece) => `'${piece}'`)
  return `concat(${parts.join(", \"'\", ")})`
}

/** The input of `apply-template`: the template's name and each variable, quoted. */
export function applyTemplateBody (template: string, variables: Readonly<Record<string, string | number | boolean>> = {}): string {
  const variable = Object.entries(variables).map(([name, value]) => ({ name, value: xpathLiteral(String(value)) }))
  return JSON.stringify({ input: { 'template-name': template, ...(variable.length === 0 ? {} : { variable }) } })
}

/** The input of `commit-queue add-lock`; `block-others` is an empty leaf, present only when true. */
export function addLockBody (devices: readonly string[], blockOthers: boolean): string {
  return JSON.stringify({ input: { device: devices, ...(blockOthers ? { 'block-others': [null] } : {}) } })
}

/** A device name or a list of them, as a list, each once, in the order given. */
export function deviceList (devices: string | readonly string[]): string[] {
  return [...new Set(typeof devices === 'string' ? [devices] : devices)]
}

/** Runs `work` on each item, at most `limit` at once; the results in the items' order. */
export async function mapBounded<T, R> (items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
