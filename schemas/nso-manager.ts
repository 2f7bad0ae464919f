// The platform's NSO Manager operations (routes/orchestrator_manager/operations.ts): bodies,
// parameters and answers. The schemas check shapes and bounds; docs/orchestrator.md gives the NSO
// call behind each one.
import { Type, type Static } from '@sinclair/typebox'
import { FreeFormObject } from './common.js'
import { AdapterId } from './orchestrator.js'

export const MAX_DEVICES = 100
export const MAX_COMMANDS = 50
export const MAX_TEMPLATES = 100
export const MAX_VARIABLES = 100
/** runCommand(s): devices times commands, at most (each one NSO call under the adapter's deadline). */
export const MAX_DEVICE_COMMANDS = 500

// No control characters anywhere: names go into paths, commands into a device's CLI.
const PRINTABLE = '^[^\\x00-\\x1f\\x7f]+$'

export const DeviceName = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: PRINTABLE,
  // No `examples` here: the schema stands inside anyOf, where OpenAPI 3.0 allows none.
  description: 'An NSO device name, as NSO has it, for example `ce0` or `core/rtr-1` (percent-encoded into RESTCONF paths, `/` and `,` too).'
})

const Devices = Type.Union([
  DeviceName,
  Type.Array(DeviceName, { minItems: 1, maxItems: MAX_DEVICES })
], { description: `One device name, or a list of 1 to ${MAX_DEVICES} (each named once: repeats are dropped).` })

const Command = Type.String({ minLength: 1, maxLength: 4096, pattern: PRINTABLE, description: 'A show command as typed at the device\'s CLI.', examples: ['show version'] })

export const AdapterParam = Type.Object({ adapterId: AdapterId })
export const SubstringParams = Type.Object({
  substring: Type.String({ minLength: 1, maxLength: 253, pattern: PRINTABLE, description: 'Part of a device name, matched ignoring case.' })
})
export const AdapterSubstringParams = Type.Composite([AdapterParam, SubstringParams])

export const RunActionBody = Type.Object({
  path: Type.String({
    minLength: 1,
    maxLength: 2048,
    pattern: '^/[^\\x00-\\x1f\\x7f]*$',
    description: 'The action\'s keypath, as NSO\'s JSON-RPC takes it.',
    examples: ['/ncs:devices/device{ce0}/sync-from', '/ncs:devices/check-sync']
  }),
  params: FreeFormObject({ description: 'The action\'s input, as NSO\'s JSON-RPC `run_action` takes it (`{}` for none).' }),
  variables: Type.Optional(FreeFormObject({ description: 'Accepted for the platform\'s clients; must be empty (nothing is substituted).' }))
}, { additionalProperties: false })
export type RunActionBody = Static<typeof RunActionBody>

export const RunActionResponse = Type.Object({
  result: Type.Unknown({ description: 'NSO\'s `result` of `run_action` as it came (format "normal": a list of `{name, value}`).' })
}, { description: 'NSO\'s JSON-RPC result envelope.' })

export const NameList = Type.Object({
  result: Type.Array(Type.String(), { description: 'Sorted, each once.' })
})

export const IsAliveBody = Type.Object({ device: DeviceName }, { additionalProperties: false })
export const IsAliveResponse = Type.Object({
  device: Type.String(),
  connected: Type.Unknown({ description: 'The `result` of NSO\'s `connect` action (true when NSO connected).' }),
  info: Type.Optional(Type.String({ description: 'NSO\'s `info` of the connect action, when it gave one.' }))
})

export const RunCommandBody = Type.Object({ devices: Devices, command: Command }, { additionalProperties: false })
export type RunCommandBody = Static<typeof RunCommandBody>
export const RunCommandsBody = Type.Object({
  devices: Devices,
  commands: Type.Array(Command, { minItems: 1, maxItems: MAX_COMMANDS })
}, { additionalProperties: false })
export type RunCommandsBody = Static<typeof RunCommandsBody>

const CommandEntry = Type.Object({
  device: Type.String(),
  command: Type.Optional(Type.String()),
  status: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  result: Type.String({ description: 'The command\'s output; for a failure, NSO\'s message (or the service\'s).' }),
  code: Type.Optional(Type.String({ description: 'For a failure: the error code (UPSTREAM_ERROR when NSO refused, DEVICE_NOT_FOUND, UNSUPPORTED_NED, UPSTREAM_TIMEOUT...).' }))
})
export const RunCommandResponse = Type.Array(CommandEntry, { description: 'One entry per device, in the order given.' })
export const RunCommandsResponse = Type.Array(Type.Array(CommandEntry), { description: 'One list per command, in the order given; in each, one entry per device.' })

const Variables = Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,127}$' }),
  Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean()]),
  { maxProperties: MAX_VARIABLES, description: 'Template variables; each value goes to NSO as an XPath string literal.' })

export const ApplyTemplatesBody = Type.Object({
  adapterId: Type.Optional(AdapterId),
  templates: Type.Array(Type.Object({
    device: DeviceName,
    template: Type.String({ minLength: 1, maxLength: 253, pattern: PRINTABLE }),
    variables: Type.Optional(Variables)
  }, { additionalProperties: false }), { minItems: 1, maxItems: MAX_TEMPLATES }),
  options: Type.Optional(Type.Unknown({ description: 'Not supported yet (dry-run, commit queue): a 400 when given.' }))
}, { additionalProperties: false })
export type ApplyTemplatesBody = Static<typeof ApplyTemplatesBody>

export const ApplyTemplatesResponse = Type.Object({
  success: Type.Boolean({ description: 'True when every pair was applied.' }),
  result: Type.Array(Type.Object({
    device: Type.String(),
    template: Type.String(),
    adapterId: Type.Optional(Type.String()),
    success: Type.Boolean(),
    result: Type.Unknown({ description: 'NSO\'s output (null when it gave none), or for a failure NSO\'s text.' }),
    code: Type.Optional(Type.String())
  }), { description: 'One entry per pair, in the order given.' })
})

export const LockItemBody = Type.Object({
  devices: Devices,
  blockOthers: Type.Boolean({ description: 'Lock against every other commit-queue item, not only the ones touching these devices.' })
}, { additionalProperties: false })
export type LockItemBody = Static<typeof LockItemBody>

export const LockItemResponse = FreeFormObject({ description: 'NSO\'s output of `commit-queue add-lock` as it came (`{"tailf-ncs:output":{"commit-queue-id":...}}`).' })
