import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ADMINS } from '../../lib/auth/roles.js'
import { InvalidOperationInput } from '../../lib/orchestrator/errors.js'
import { deviceList } from '../../lib/orchestrator/operations.js'
import type { OperationContext } from '../../plugins/orchestrator/operations.js'
import { errorResponses } from '../../schemas/common.js'
import { UpstreamErrorResponse } from '../../schemas/orchestrator.js'
import {
  AdapterParam, AdapterSubstringParams, ApplyTemplatesBody, ApplyTemplatesResponse, IsAliveBody, IsAliveResponse, LockItemBody, LockItemResponse,
  MAX_DEVICE_COMMANDS, NameList, RunActionBody, RunActionResponse, RunCommandBody, RunCommandResponse, RunCommandsBody, RunCommandsResponse, SubstringParams
} from '../../schemas/nso-manager.js'

const upstreamErrors = { 502: UpstreamErrorResponse, 504: UpstreamErrorResponse }
// Every operation may meet an unknown adapter (404), a full line of calls or a stopping instance (503).
const errors = { ...errorResponses(400, 404, 500, 503), ...upstreamErrors }

/**
 * Runs `work` with a context whose NSO trace ids end in the request's audit event, however it
 * ends. `target`: the adapter id, or the device, or `*` for all adapters.
 */
async function audited<T> (request: FastifyRequest, reply: FastifyReply, action: string, target: string, work: (ctx: OperationContext) => Promise<T>): Promise<T> {
  const ctx: OperationContext = { caller: reply.raw, traceIds: [] }
  request.audit(`nso.${action}`, target)
  try {
    return await work(ctx)
  } finally {
    if (ctx.traceIds.length > 0) request.audit(`nso.${action}`, target, { nsoTraceIds: ctx.traceIds.join(' ') })
  }
}

/**
 * The platform's NSO Manager operations (admin only), as translations to NSO's RESTCONF and
 * JSON-RPC through the adapters' credentials (plugins/orchestrator/operations.ts). Each schema's
 * operationId is the platform's method name.
 */
const operations: FastifyPluginAsyncTypebox = async (fastify) => {
  const nso = fastify.nsoOperations
  const config = { roles: ADMINS }
  const tags = ['orchestrator_manager']

  fastify.post('/runAction/:adapterId', {
    config,
    schema: {
      operationId: 'runAction',
      summary: 'Run an NSO action (JSON-RPC run_action)',
      description: 'Logs in to NSO\'s JSON-RPC API with the adapter\'s credentials, opens a read transaction, calls `run_action` ' +
        '`{th, path, params, format: "normal"}` and logs out (also after an error). Answers NSO\'s `{result}`; a JSON-RPC error ' +
        '(which NSO sends with HTTP 200) is a 502 `UPSTREAM_ERROR` whose `upstream.body.error` is NSO\'s error object.',
      tags,
      params: AdapterParam,
      body: RunActionBody,
      response: { 200: RunActionResponse, ...errors }
    }
  }, async (request, reply) => {
    const { adapterId } = request.params
    if (request.body.variables !== undefined && Object.keys(request.body.variables).length > 0) {
      throw new InvalidOperationInput('body/variables is not supported: give the action\'s input in body/params')
    }
    return await audited(request, reply, 'runAction', adapterId, async (ctx) => {
      request.audit('nso.runAction', adapterId, { path: request.body.path })
      return { result: await nso.runAction(adapterId, { path: request.body.path, params: request.body.params }, ctx) }
    })
  })

  fastify.get('/devices/:substring', {
    config,
    schema: {
      operationId: 'getDevicesFiltered',
      summary: 'Devices of every adapter whose name contains a substring',
      description: 'Asks every adapter (`GET /restconf/data/tailf-ncs:devices/device?fields=name`), a few at once; answers the names ' +
        'containing `substring` ignoring case, sorted, each once. One adapter failing fails the call (502 or 504 naming it).',
      tags,
      params: SubstringParams,
      response: { 200: NameList, ...errors }
    }
  }, async (request, reply) =>
    await audited(request, reply, 'getDevicesFiltered', '*', async (ctx) =>
      ({ result: await nso.devicesFiltered(request.params.substring, undefined, ctx) })))

  fastify.get('/devices/:adapterId/:substring', {
    config,
    schema: {
      operationId: 'getDevicesFilteredForAdapter',
      summary: 'Devices of one adapter whose name contains a substring',
      description: 'As `GET /devices/:substring`, on one adapter.',
      tags,
      params: AdapterSubstringParams,
      response: { 200: NameList, ...errors }
    }
  }, async (request, reply) =>
    await audited(request, reply, 'getDevicesFilteredForAdapter', request.params.adapterId, async (ctx) =>
      ({ result: await nso.devicesFiltered(request.params.substring, request.params.adapterId, ctx) })))

  fastify.get('/neds/:adapterId', {
    config,
    schema: {
      operationId: 'getNEDs',
      summary: 'The NED ids of one adapter',
      description: '`GET /restconf/data/tailf-ncs:devices/ned-ids/ned-id?fields=id`; sorted, each once.',
      tags,
      params: AdapterParam,
      response: { 200: NameList, ...errors }
    }
  }, async (request, reply) =>
    await audited(request, reply, 'getNEDs', request.params.adapterId, async (ctx) => ({ result: await nso.neds(request.params.adapterId, ctx) })))

  fastify.get('/allNeds', {
    config,
    schema: {
      operationId: 'getAllNEDs',
      summary: 'The NED ids of every adapter',
      description: 'The union of every adapter\'s NED ids, sorted; one adapter failing fails the call (502 or 504 naming it).',
      tags,
      response: { 200: NameList, ...errors }
    }
  }, async (request, reply) => await audited(request, reply, 'getAllNEDs', '*', async (ctx) => ({ result: await nso.neds(undefined, ctx) })))

  fastify.get('/authgroups/:adapterId', {
    config,
    schema: {
      operationId: 'getAuthGroups',
      summary: 'The auth groups of one adapter',
      description: '`GET /restconf/data/tailf-ncs:devices/authgroups/group?fields=name`; sorted, each once.',
      tags,
      params: AdapterParam,
      response: { 200: NameList, ...errors }
    }
  }, async (request, reply) =>
    await audited(request, reply, 'getAuthGroups', request.params.adapterId, async (ctx) => ({ result: await nso.authGroups(request.params.adapterId, ctx) })))

  fastify.get('/allAuthgroups', {
    config,
    schema: {
      operationId: 'getAllAuthGroups',
      summary: 'The auth groups of every adapter',
      description: 'The union of every adapter\'s auth group names, sorted; one adapter failing fails the call (502 or 504 naming it).',
      tags,
      response: { 200: NameList, ...errors }
    }
  }, async (request, reply) => await audited(request, reply, 'getAllAuthGroups', '*', async (ctx) => ({ result: await nso.authGroups(undefined, ctx) })))

  fastify.post('/isAlive', {
    config,
    schema: {
      operationId: 'isAlive',
      summary: 'Whether NSO can connect to a device',
      description: 'Finds the adapter that has the device (asked in id order; 404 `DEVICE_NOT_FOUND` when none has it), then runs its ' +
        '`connect` action: `{device, connected, info?}`.',
      tags,
      body: IsAliveBody,
      response: { 200: IsAliveResponse, ...errors }
    }
  }, async (request, reply) => await audited(request, reply, 'isAlive', request.body.device, async (ctx) => await nso.isAlive(request.body.device, ctx)))

  const COMMAND_NOTE = 'Per device: its adapter (asked in id order), its NED (`device-type`), then live-status `exec any` of the NED\'s stats ' +
    'module (IOS, IOS XR, NX-OS, ASA). One device\'s failure (NSO\'s refusal, an unknown device, a NED without show commands) is its ' +
    'entry\'s, with NSO\'s message; an adapter failing while a device is looked for fails the call.'

  fastify.post('/runCommand', {
    config,
    schema: {
      operationId: 'runCommand',
      summary: 'Run a show command on devices',
      description: `${COMMAND_NOTE} Answers one entry \`{device, command, status, result}\` per device.`,
      tags,
      body: RunCommandBody,
      response: { 200: RunCommandResponse, ...errors }
    }
  }, async (request, reply) => {
    const devices = deviceList(request.body.devices)
    return await audited(request, reply, 'runCommand', devices.join(','), async (ctx) =>
      (await nso.runCommands(devices, [request.body.command], ctx))[0] ?? [])
  })

  fastify.post('/runCommands', {
    config,
    schema: {
      operationId: 'runCommands',
      summary: 'Run show commands on devices',
      description: `${COMMAND_NOTE} Answers one list per command, each with one entry \`{device, command, status, result}\` per device.`,
      tags,
      body: RunCommandsBody,
      response: { 200: RunCommandsResponse, ...errors }
    }
  }, async (request, reply) => {
    const devices = deviceList(request.body.devices)
    if (devices.length * request.body.commands.length > MAX_DEVICE_COMMANDS) {
      throw new InvalidOperationInput(`body/commands: ${request.body.commands.length} commands on ${devices.length} devices are more than ${MAX_DEVICE_COMMANDS} runs in one call; split it`)
    }
    return await audited(request, reply, 'runCommands', devices.join(','), async (ctx) => await nso.runCommands(devices, request.body.commands, ctx))
  })

  fastify.post('/applyTemplates', {
    config,
    schema: {
      operationId: 'applyTemplates',
      summary: 'Apply device templates',
      description: 'Per pair: `POST .../device=<d>/apply-template` `{"input":{"template-name", "variable":[{name, value}]}}`, each value an ' +
        'XPath string literal, on `adapterId` or else the adapter that has the device. Answers `{success, result}`: every pair\'s outcome, ' +
        'NSO\'s text for a failed one. `options` (dry-run, commit queue) is not supported yet: a 400.',
      tags,
      body: ApplyTemplatesBody,
      response: { 200: ApplyTemplatesResponse, ...errors }
    }
  }, async (request, reply) => {
    if (request.body.options !== undefined) throw new InvalidOperationInput('body/options is not supported yet (dry-run, commit queue): leave it out')
    const { adapterId, templates } = request.body
    return await audited(request, reply, 'applyTemplates', adapterId ?? '*', async (ctx) => await nso.applyTemplates(adapterId, templates, ctx))
  })

  fastify.post('/lockItem/:adapterId', {
    config,
    schema: {
      operationId: 'addLockItem',
      summary: 'Add a lock item to NSO\'s commit queue',
      description: '`POST /restconf/data/tailf-ncs:devices/commit-queue/add-lock` `{"input":{"device":[..], "block-others":[null] when true}}`; ' +
        'NSO\'s output as it came. An empty device list is a 400 (NSO would lock every device).',
      tags,
      params: AdapterParam,
      body: LockItemBody,
      response: { 200: LockItemResponse, ...errors }
    }
  }, async (request, reply) => {
    const { adapterId } = request.params
    const devices = deviceList(request.body.devices)
    return await audited(request, reply, 'addLockItem', adapterId, async (ctx) => await nso.addLock(adapterId, devices, request.body.blockOthers, ctx))
  })
}

export default operations
