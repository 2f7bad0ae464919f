// The platform's NSO Manager operations (runAction, getDevicesFiltered, isAlive, runCommand(s),
// applyTemplates, addLockItem, ...) over the relay's client: lib/orchestrator/operations.ts builds
// each request and reads each answer; this file sends them, finds which adapter has a device, and
// asks several adapters or devices at once, a bounded number at a time.
import type { Caller } from '../../lib/orchestrator/call-queue.js'
import { HttpError } from '../../lib/http/errors.js'
import { DeviceNotFound, UnsupportedNed, UpstreamInvalidJson } from '../../lib/orchestrator/errors.js'
import {
  actionOutput, ADD_LOCK_PATH, addLockBody, applyTemplateBody, applyTemplatePath, AUTH_GROUPS_PATH, connectPath, DEVICE_NAMES_PATH,
  deviceLookupPath, deviceTypePath, execAnyBody, execAnyPath, filterNames, listLeaves, mapBounded, NED_IDS_PATH, nedIdOf,
  sortedUnique, statsModuleOf, templateProblem, YANG_DATA_JSON
} from '../../lib/orchestrator/operations.js'
import { nsoErrorMessage, readJson } from '../../lib/orchestrator/upstream.js'
import { OPERATION_ANSWER_MAX_BYTES, type OrchestratorClient } from './client.js'
import type { JsonRpcClient } from './json-rpc.js'

/** Adapters (or devices) asked at once by one operation. */
export const OPERATION_CONCURRENCY = 4

/** What one call of an operation carries: who waits for it, and NSO's trace ids it heard. */
export interface OperationContext {
  caller?: Caller
  /** NSO's X-Cisco-NSO-Trace-ID of each answer, in order (for the audit event); at most MAX_TRACE_IDS. */
  traceIds: string[]
}
export const MAX_TRACE_IDS = 50

export interface CommandEntry { device: string, command?: string, status: 'success' | 'failure', result: string, code?: string }
export interface TemplateEntry { device: string, template: string, adapterId?: string, success: boolean, result: unknown, code?: string }

export interface TemplatePair { device: string, template: string, variables?: Record<string, string | number | boolean> }

/** The service fastify.nsoOperations: the platform's NSO Manager operations, one method each. */
export interface NsoOperations {
  /** JSON-RPC run_action in a read transaction; NSO's result as it came. */
  runAction: (adapterId: string, input: { path: string, params: Record<string, unknown> }, ctx: OperationContext) => Promise<unknown>
  /** Device names holding `substring` (any case), sorted, of one adapter or of all. */
  devicesFiltered: (substring: string, adapterId: string | undefined, ctx: OperationContext) => Promise<string[]>
  /** NED ids of one adapter or of all, sorted, no duplicates. */
  neds: (adapterId: string | undefined, ctx: OperationContext) => Promise<string[]>
  /** Auth group names of one adapter or of all, sorted, no duplicates. */
  authGroups: (adapterId: string | undefined, ctx: OperationContext) => Promise<string[]>
  /** The device's adapter found, then its connect action. */
  isAlive: (device: string, ctx: OperationContext) => Promise<{ device: string, connected: unknown, info?: string }>
  /** Each command on each device: one list per command, one entry per device, in the order given. */
  runCommands: (devices: readonly string[], commands: readonly string[], ctx: OperationContext) => Promise<CommandEntry[][]>
  /** Each template on its device; every pair's outcome, `success` when all succeeded. */
  applyTemplates: (adapterId: string | undefined, pairs: readonly TemplatePair[], ctx: OperationContext) => Promise<{ success: boolean, result: TemplateEntry[] }>
  /** commit-queue add-lock; NSO's output as it came. */
  addLock: (adapterId: string, devices: readonly string[], blockOthers: boolean, ctx: OperationContext) => Promise<unknown>
}

const heard = (ctx: OperationContext, traceId: string | undefined): void => {
  if (traceId !== undefined && ctx.traceIds.length < MAX_TRACE_IDS) ctx.traceIds.push(traceId)
}

/** The status of the orchestrator's error answer an UPSTREAM_ERROR carries. */
function upstreamOf (err: unknown): { status: number, body: unknown, traceId?: string } | undefined {
  if (!(err instanceof HttpError) || err.code !== 'UPSTREAM_ERROR') return undefined
  return err.details?.upstream as { status: number, body: unknown, traceId?: string } | undefined
}

/** A failure of one device's part, as its entry says it: NSO's own words when it said any. */
function entryFailure (err: unknown): { result: string, code?: string } {
  const upstream = upstreamOf(err)
  if (upstream !== undefined) return { result: nsoErrorMessage(upstream.body) ?? (err as Error).message, code: 'UPSTREAM_ERROR' }
  if (err instanceof HttpError) return { result: err.message, ...(err.code === undefined ? {} : { code: err.code }) }
  throw err
}

export function nsoOperations (client: OrchestratorClient, jsonRpc: JsonRpcClient, adapterIds: () => Promise<string[]>): NsoOperations {
  /** A RESTCONF call whose answer is read whole and parsed. */
  async function rest (adapterId: string, ctx: OperationContext, method: 'GET' | 'POST', path: string, body?: string): Promise<unknown> {
    let answer
    try {
      answer = await client.send(adapterId, {
        method,
        path,
        accept: YANG_DATA_JSON,
        ...(body === undefined ? {} : { body: { text: body, contentType: YANG_DATA_JSON } })
      }, { maxBytes: OPERATION_ANSWER_MAX_BYTES, ...(ctx.caller === undefined ? {} : { caller: ctx.caller }) })
    } catch (err) {
      heard(ctx, upstreamOf(err)?.traceId)
      throw err
    }
    heard(ctx, answer.traceId)
    const json = readJson(answer.contentType, answer.body)
    if ('invalid' in json) throw new UpstreamInvalidJson(adapterId, json.invalid)
    return json.value
  }

  /** A list read; NSO answers 404 (5.3: bodiless; 6.x: "uri keypath not found") for a list without entries. */
  async function readList (adapterId: string, ctx: OperationContext, path: string, list: string, leaf: string): Promise<string[]> {
    try {
      return listLeaves(await rest(adapterId, ctx, 'GET', path), list, leaf)
    } catch (err) {
      if (upstreamOf(err)?.status === 404) return []
      throw err
    }
  }

  /**
   * `work` on every adapter, a bounded number at once; the results in id order. Any adapter's
   * failure fails the whole (the first in id order): never a silent partial answer.
   */
  async function everyAdapter<R> (work: (adapterId: string) => Promise<R>): Promise<R[]> {
    const ids = await adapterIds()
    const outcomes = await mapBounded(ids, OPERATION_CONCURRENCY, async (id) => {
      try {
        return { ok: true as const, value: await work(id) }
      } catch (error) {
        return { ok: false as const, error }
      }
    })
    return outcomes.map((outcome) => {
      if (!outcome.ok) throw outcome.error
      return outcome.value
    })
  }

  /**
   * The adapter that has `device`: asked in id order, OPERATION_CONCURRENCY at once; the first in
   * that order to answer 200 wins (later ones are not awaited). A 404 is "not here"; a failure of
   * an adapter before the winner fails the lookup (its error names it); none: DEVICE_NOT_FOUND.
   */
  async function findDevice (device: string, ctx: OperationContext): Promise<string> {
    const ids = await adapterIds()
    const asked: Array<Promise<{ found: boolean } | { error: unknown }>> = []
    const ask = (id: string): Promise<{ found: boolean } | { error: unknown }> =>
      rest(id, ctx, 'GET', deviceLookupPath(device)).then(() => ({ found: true }), (error: unknown) =>
        upstreamOf(error)?.status === 404 ? { found: false } : { error })
    for (let i = 0; i < ids.length; i++) {
      while (asked.length < Math.min(ids.length, i + OPERATION_CONCURRENCY)) asked.push(ask(ids[asked.length] as string))
      const outcome = await asked[i]
      if (outcome === undefined) break
      if ('error' in outcome) throw outcome.error
      if (outcome.found) return ids[i] as string
    }
    throw new DeviceNotFound(device)
  }

  /** The live-status module a device's NED runs show commands through. */
  async function statsModule (adapterId: string, device: string, ctx: OperationContext): Promise<string> {
    const nedId = nedIdOf(await rest(adapterId, ctx, 'GET', deviceTypePath(device)))
    const module = nedId === undefined ? undefined : statsModuleOf(nedId)
    if (module === undefined) throw new UnsupportedNed(device, nedId === undefined ? '(none)' : `"${nedId}"`)
    return module
  }

  return {
    /** JSON-RPC run_action in a read transaction; NSO's result as it came. */
    async runAction (adapterId: string, input: { path: string, params: Record<string, unknown> }, ctx: OperationContext): Promise<unknown> {
      return await jsonRpc.session(adapterId, async (session) => {
        const th = await session.newTransaction('read')
        return await session.call('run_action', { th, path: input.path, params: input.params, format: 'normal' })
      }, { ...(ctx.caller === undefined ? {} : { caller: ctx.caller }), onTraceId: (id) => { heard(ctx, id) } })
    },

    async devicesFiltered (substring: string, adapterId: string | undefined, ctx: OperationContext): Promise<string[]> {
      const read = async (id: string): Promise<string[]> => await readList(id, ctx, DEVICE_NAMES_PATH, 'device', 'name')
      const names = adapterId === undefined ? (await everyAdapter(read)).flat() : await read(adapterId)
      return filterNames(names, substring)
    },

    async neds (adapterId: string | undefined, ctx: OperationContext): Promise<string[]> {
      const read = async (id: string): Promise<string[]> => await readList(id, ctx, NED_IDS_PATH, 'ned-id', 'id')
      return sortedUnique(adapterId === undefined ? (await everyAdapter(read)).flat() : await read(adapterId))
    },

    async authGroups (adapterId: string | undefined, ctx: OperationContext): Promise<string[]> {
      const read = async (id: string): Promise<string[]> => await readList(id, ctx, AUTH_GROUPS_PATH, 'group', 'name')
      return sortedUnique(adapterId === undefined ? (await everyAdapter(read)).flat() : await read(adapterId))
    },

    async isAlive (device: string, ctx: OperationContext): Promise<{ device: string, connected: unknown, info?: string }> {
      const adapterId = await findDevice(device, ctx)
      const output = actionOutput(await rest(adapterId, ctx, 'POST', connectPath(device)))
      const info = output?.info
      return { device, connected: output?.result ?? null, ...(typeof info === 'string' ? { info } : {}) }
    },

    /** Each command on each device: one list per command, one entry per device, in the order given. */
    async runCommands (devices: readonly string[], commands: readonly string[], ctx: OperationContext): Promise<CommandEntry[][]> {
      const perDevice = await mapBounded(devices, OPERATION_CONCURRENCY, async (device): Promise<CommandEntry[]> => {
        let target: { adapterId: string, module: string }
        try {
          const adapterId = await findDevice(device, ctx)
          target = { adapterId, module: await statsModule(adapterId, device, ctx) }
        } catch (err) {
          // An adapter failing while the device is looked for fails the call; the rest is the device's.
          if (err instanceof HttpError && err.code !== 'DEVICE_NOT_FOUND' && err.code !== 'UNSUPPORTED_NED' && upstreamOf(err) === undefined) throw err
          const failure = entryFailure(err)
          return commands.map((command) => ({ device, command, status: 'failure', ...failure }))
        }
        const entries: CommandEntry[] = []
        for (const command of commands) {
          try {
            const output = actionOutput(await rest(target.adapterId, ctx, 'POST', execAnyPath(device, target.module), execAnyBody(command)))
            const result = output?.result
            entries.push({ device, command, status: 'success', result: typeof result === 'string' ? result : JSON.stringify(result ?? '') })
          } catch (err) {
            entries.push({ device, command, status: 'failure', ...entryFailure(err) })
          }
        }
        return entries
      })
      return commands.map((_command, c) => perDevice.map((entries) => entries[c] as CommandEntry))
    },

    /** Each template on its device; every pair's outcome, `success` when all succeeded. */
    async applyTemplates (adapterId: string | undefined, pairs: readonly TemplatePair[], ctx: OperationContext): Promise<{ success: boolean, result: TemplateEntry[] }> {
      const result = await mapBounded(pairs, OPERATION_CONCURRENCY, async (pair): Promise<TemplateEntry> => {
        let id: string
        try {
          id = adapterId ?? await findDevice(pair.device, ctx)
        } catch (err) {
          if (!(err instanceof HttpError) || err.code !== 'DEVICE_NOT_FOUND') throw err
          return { device: pair.device, template: pair.template, success: false, result: err.message, code: 'DEVICE_NOT_FOUND' }
        }
        try {
          const output = actionOutput(await rest(id, ctx, 'POST', applyTemplatePath(pair.device), applyTemplateBody(pair.template, pair.variables)))
          const problem = templateProblem(output)
          if (problem !== undefined) return { device: pair.device, template: pair.template, adapterId: id, success: false, result: problem, code: 'TEMPLATE_NOT_APPLIED' }
          return { device: pair.device, template: pair.template, adapterId: id, success: true, result: output ?? null }
        } catch (err) {
          const failure = entryFailure(err)
          return { device: pair.device, template: pair.template, adapterId: id, success: false, ...failure }
        }
      })
      return { success: result.every((entry) => entry.success), result }
    },

    /** commit-queue add-lock; NSO's output as it came. */
    async addLock (adapterId: string, devices: readonly string[], blockOthers: boolean, ctx: OperationContext): Promise<unknown> {
      return (await rest(adapterId, ctx, 'POST', ADD_LOCK_PATH, addLockBody(devices, blockOthers))) ?? {}
    }
  }
}
