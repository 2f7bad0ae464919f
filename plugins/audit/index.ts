// The audit trail: `request.audit(action, target, details?)` marks a request as one to record;
// an onResponse hook records it (and every denied request) with its outcome, status and duration,
// onto a bounded in-memory queue that one flusher writes in batches (lib/audit/queue.ts);
// retention removes old events in small batches on a timer. A request that may change something
// reserves its event's place before it acts (a 503 when the queue is full), so no write goes
// unrecorded; events of callers without credentials are small and counted per address and window
// past a few (lib/audit/denied.ts). See docs/audit.md.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify'
import client from 'prom-client'
import { Type } from '@sinclair/typebox'
import { AsyncResource } from 'node:async_hooks'
import type { ServerResponse } from 'node:http'
import { setImmediate as yieldTurn } from 'node:timers/promises'
import { AuditQueue } from '../../lib/audit/queue.js'
import { AuditTrailFull } from '../../lib/audit/errors.js'
import { DeniedLimiter, boundedText, deniedTarget, possibleUsername } from '../../lib/audit/denied.js'
import { withDetails } from '../../lib/http/errors.js'
import {
  isDenied, outcomeOf, storableDetails, storableText, type AuditActor, type AuditDetails, type AuditEvent
} from '../../lib/audit/events.js'
import { auditEventsRepository, type AuditEventsRepository } from './events-repository.js'
import { hookList } from '../../lib/http/hook-list.js'
import { ErrorResponse } from '../../schemas/common.js'
import { callerHungUp } from '../../lib/http/hang-up.js'

/** The Retry-After of a write refused because the queue is full: the longest retry delay of its writes. */
export const AUDIT_FULL_RETRY_AFTER_S = 5
/** Addresses whose denied requests are counted apart in a window; past it, together. */
export const AUDIT_DENIED_ADDRESSES = 10_000
/** Events one INSERT writes at most. */
export const AUDIT_BATCH_SIZE = 500
/** After failed writes (database down), the longest wait before the next attempt. */
export const AUDIT_MAX_RETRY_MS = 5000
/** Old events are looked for this often, and deleted this many per statement. */
export const AUDIT_PRUNE_INTERVAL_MS = 10 * 60_000
export const AUDIT_PRUNE_BATCH = 1000
/** Drops are logged at most this often. */
const DROP_LOG_INTERVAL_MS = 10_000

interface PendingEvent {
  /** The caller's address, read when the request marks itself: it cannot be read once the caller has hung up. */
  address: string
  action: string
  target: string
  details: AuditDetails | null
  actor: Partial<AuditActor> | null
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Records this request in the audit trail once answered: what it does to what, with facts
     * that are never a body or a secret. A later call replaces action and target and adds details.
     * `actor`, where no user is signed in yet (a login, a token request).
     */
    audit: (action: string, target: string, details?: AuditDetails, actor?: Partial<AuditActor>) => void
    auditPending: PendingEvent | null
    /** Whether this request holds a place in the queue for its event (a write, from before it acts). */
    auditReserved: boolean
    /** Whether the answer's status is final (its onSend ran): a hang-up after it records the event. */
    auditAnswered: boolean
  }
  interface FastifyInstance {
    audit: AuditService
  }
}

/** `fastify.audit`: the trail's repository, and its queue and retention for operators and tests. */
export interface AuditService {
  readonly enabled: boolean
  repository: AuditEventsRepository
  /** Writes what is queued now. */
  flush: () => Promise<void>
  /** Deletes events past AUDIT_RETENTION_DAYS, a batch at a time; how many. */
  prune: () => Promise<{ deleted: number, batches: number }>
  state: () => { queued: number, reserved: number, written: number, dropped: number, writeFailures: number, suppressed: number }
  /** Ends the window of denied requests now: their counts are queued as events. */
  endDeniedWindow: () => void
}

// The reply of a write, on its raw response, for the response's close listener.
const AUDITED_REPLY = Symbol('audited reply')
type AuditedResponse = ServerResponse & { [AUDITED_REPLY]?: FastifyReply }

// What a request's pending event becomes once it is recorded.
const RECORDED: PendingEvent = Object.freeze({ address: '', action: '', target: '', details: null, actor: null })

export default fp(async (fastify) => {
  const { AUDIT_ENABLED: enabled, AUDIT_RETENTION_DAYS: retentionDays, AUDIT_DENIED_WINDOW_MS: deniedWindowMs } = fastify.config
  const repository = auditEventsRepository(fastify.db)
  let lastDropLog = 0
  // Writes reserve their places (and are refused when none is left); other events (about 1 KiB
  // each at most, texts bounded) are taken only below half the bound, so they never crowd writes out.
  const maxQueued = fastify.config.AUDIT_QUEUE_MAX
  const queue = new AuditQueue<AuditEvent>({
    maxQueued,
    maxUnreserved: Math.floor(maxQueued / 2),
    batchSize: AUDIT_BATCH_SIZE,
    intervalMs: fastify.config.AUDIT_FLUSH_INTERVAL_MS,
    maxRetryMs: AUDIT_MAX_RETRY_MS,
    // Bound to the context the plugin starts in: a batch belongs to no request, and is traced
    // apart from the one whose event happened to start the flush.
    write: AsyncResource.bind(async (events: AuditEvent[]) => { await repository.insert(events) }),
    onWriteError: (err, queued) => {
      fastify.log.warn({ err, queued, dropped: queue.state().dropped }, 'audit events could not be written; they stay queued and are retried')
    }
  })

  const denied = new DeniedLimiter({
    perAddress: fastify.config.AUDIT_DENIED_PER_ADDRESS,
    total: fastify.config.AUDIT_DENIED_MAX,
    addresses: AUDIT_DENIED_ADDRESSES
  })
  let suppressed = 0

  fastify.decorateRequest('auditPending', null)
  fastify.decorateRequest('auditReserved', false)
  fastify.decorateRequest('auditAnswered', false)
  fastify.decorateRequest('audit', function (action: string, target: string, details?: AuditDetails, actor?: Partial<AuditActor>) {
    const pending = this.auditPending
    this.auditPending = {
      // Undefined once the caller has hung up: the socket no longer knows its peer.
      address: pending?.address ?? this.ip ?? '',
      action,
      target,
      details: details === undefined ? pending?.details ?? null : { ...pending?.details, ...details },
      actor: actor ?? pending?.actor ?? null
    }
  })

  function record (request: FastifyRequest, reply: FastifyReply): void {
    const pending = request.auditPending
    const status = reply.statusCode
    const reserved = request.auditReserved
    request.auditReserved = false
    if (pending === RECORDED || (pending === null && !isDenied(status))) {
      if (reserved) queue.release()
      return
    }
    // Once per request, whichever hook comes first.
    request.auditPending = RECORDED
    // Set by the auth plugin on authenticated routes only; null elsewhere.
    const { user, auth } = request
    let event: AuditEvent
    if (pending === null) {
      // A denied request: what its caller sent is kept short (lib/audit/denied.ts).
      const address = request.ip ?? ''
      if (!admitDenied(address)) {
        if (reserved) queue.release()
        return
      }
      event = {
        ...base(request.id, address, status, reply.elapsedTime),
        // The signed-in user of a 403; for a 401 the username of rejected Basic credentials, when
        // some user could have it. A token names none.
        actor: user?.username ?? possibleUsername(fastify.readBasicCredentials(request, reply)?.username),
        serviceAccount: nullable(auth?.clientId),
        action: 'request.denied',
        target: storableText(deniedTarget(request.method, request.url)),
        outcome: 'denied',
        details: null
      }
    } else if (user === null && status >= 400) {
      // A failed login or token request: its caller proved nothing, and chose the names sent.
      if (!admitDenied(pending.address)) {
        if (reserved) queue.release()
        return
      }
      event = {
        ...base(request.id, pending.address, status, reply.elapsedTime),
        actor: possibleUsername(pending.actor?.user),
        serviceAccount: pending.actor?.serviceAccount == null ? null : storableText(boundedText(pending.actor.serviceAccount)),
        action: storableText(pending.action),
        target: storableText(boundedText(pending.target)),
        outcome: outcomeOf(status),
        details: storableDetails(pending.details)
      }
    } else {
      event = {
        ...base(request.id, pending.address, status, reply.elapsedTime),
        actor: nullable(pending.actor?.user ?? user?.username),
        serviceAccount: nullable(pending.actor?.serviceAccount ?? auth?.clientId),
        action: storableText(pending.action),
        target: storableText(pending.target),
        outcome: outcomeOf(status),
        details: storableDetails(pending.details)
      }
    }
    if (!queue.push(event, reserved)) droppedNow()
  }

  function admitDenied (address: string): boolean {
    if (denied.admit(address)) return true
    suppressed++
    return false
  }

  function droppedNow (): void {
    if (Date.now() - lastDropLog > DROP_LOG_INTERVAL_MS) {
      lastDropLog = Date.now()
      fastify.log.error({ dropped: queue.state().dropped }, 'audit events dropped (denied requests; writes are refused instead): the queue is full (the database is down or slower than requests)')
    }
  }

  // The counts of the denied requests a window did not record, one event per address.
  function endDeniedWindow (): void {
    const now = Date.now()
    for (const count of denied.close()) {
      const event: AuditEvent = {
        at: now,
        actor: null,
        serviceAccount: null,
        address: storableText(count.address ?? ''),
        requestId: '',
        action: 'request.denied.suppressed',
        target: count.address === null ? '(other addresses)' : storableText(count.address),
        outcome: 'denied',
        status: 0,
        durationMs: 0,
        details: { suppressed: count.suppressed, addresses: count.addresses, windowMs: deniedWindowMs }
      }
      if (!queue.push(event)) droppedNow()
    }
  }

  const deniedTimer = enabled ? setInterval(endDeniedWindow, deniedWindowMs).unref() : undefined

  if (enabled) {
    fastify.addHook('onResponse', (request, reply, done) => {
      record(request, reply)
      done()
    })
    // A request that may change something holds a place for its event from before it acts (after
    // its credentials, body and parameters are checked): while the queue is full it is refused,
    // and then nothing is done. The place is used or given back once its answer is final.
    const reserve: preHandlerHookHandler = function (request, reply, done) {
      if (!queue.reserve()) {
        reply.header('retry-after', String(AUDIT_FULL_RETRY_AFTER_S))
        done(withDetails(new AuditTrailFull(queue.state().queued), { retryAfter: AUDIT_FULL_RETRY_AFTER_S }))
        return
      }
      request.auditReserved = true
      // Fastify runs no onResponse hook for an answer whose caller hung up before it was complete:
      // such a write is recorded when its connection closes, once its status is final. One
      // listener for every response, which finds its reply on it: no closure per request.
      const raw: AuditedResponse = reply.raw
      raw[AUDITED_REPLY] = reply
      raw.on('close', recordIfAnsweredAtClose)
      done()
    }
    function recordIfAnsweredAtClose (this: AuditedResponse): void {
      const reply = this[AUDITED_REPLY]
      if (reply?.request.auditAnswered === true) record(reply.request, reply)
    }
    // Fastify runs no onResponse hook for an answer whose caller hung up before it was written:
    // a write finished after its caller left (an action the orchestrator carried out, a change
    // committed) is recorded as its answer is sent, on the routes that can write. Reads pay nothing.
    const recordIfCallerLeft: onSendHookHandler = function (request, reply, payload, done) {
      request.auditAnswered = true
      if (callerHungUp(request)) record(request, reply)
      done(null, payload)
    }
    fastify.addHook('onRoute', (route) => {
      const methods = [route.method].flat()
      if (methods.every((method) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS')) return
      route.preHandler = [reserve, ...hookList(route.preHandler)]
      route.onSend = [...hookList(route.onSend), recordIfCallerLeft]
      // The OpenAPI document says so: such a route may answer 503 (AUDIT_TRAIL_FULL).
      if (route.schema !== undefined) {
        const response = route.schema.response as Record<string, unknown> | undefined
        if (response?.[503] === undefined) route.schema = { ...route.schema, response: { ...response, 503: Type.Ref(ErrorResponse) } }
      }
    })
  }

  let pruning: Promise<{ deleted: number, batches: number }> | undefined
  const prune = async (): Promise<{ deleted: number, batches: number }> => {
    pruning ??= (async () => {
      let deleted = 0
      let batches = 0
      try {
        for (;;) {
          const rows = await repository.pruneBatch(retentionDays, AUDIT_PRUNE_BATCH)
          deleted += rows
          batches++
          if (rows < AUDIT_PRUNE_BATCH || closing) break
          // Between batches requests take their turn (the embedded database has one connection).
          await yieldTurn()
        }
      } finally {
        pruning = undefined
      }
      return { deleted, batches }
    })()
    return await pruning
  }
  let closing = false
  const pruneTimer = retentionDays > 0
    ? setInterval(() => {
      prune().catch((err: unknown) => { fastify.log.warn({ err }, 'old audit events could not be removed; retried at the next interval') })
    }, AUDIT_PRUNE_INTERVAL_MS).unref()
    : undefined

  const service: AuditService = {
    enabled,
    repository,
    flush: async () => { await queue.flush() },
    prune,
    state: () => ({ ...queue.state(), suppressed }),
    endDeniedWindow
  }
  fastify.decorate('audit', service)

  fastify.addHook('onClose', async () => {
    closing = true
    clearInterval(pruneTimer)
    clearInterval(deniedTimer)
    if (enabled) endDeniedWindow()
    await pruning?.catch(() => {})
    const { lost } = await queue.close()
    if (lost > 0) fastify.log.error({ lost }, 'audit events lost at close: the database could not take them')
  })

  new client.Counter({
    name: 'audit_events_total',
    help: 'Audit events by fate: written, dropped (queue full, or the database down at close), or suppressed (denied requests past the window\'s limits, counted in request.denied.suppressed events)',
    labelNames: ['fate'],
    registers: [fastify.metricsRegistry],
    collect () {
      const { written, dropped } = queue.state()
      this.reset()
      this.inc({ fate: 'written' }, written)
      this.inc({ fate: 'dropped' }, dropped)
      this.inc({ fate: 'suppressed' }, suppressed)
    }
  })
  new client.Gauge({
    name: 'audit_events_queued',
    help: 'Audit events waiting to be written',
    registers: [fastify.metricsRegistry],
    collect () { this.set(queue.state().queued) }
  })
  new client.Counter({
    name: 'audit_write_failures_total',
    help: 'Batches of audit events the database refused or could not take (retried)',
    registers: [fastify.metricsRegistry],
    collect () {
      this.reset()
      this.inc(queue.state().writeFailures)
    }
  })
}, { name: 'audit', dependencies: ['config', 'database', 'auth', 'metrics'] })

function base (requestId: string, address: string, status: number, elapsedMs: number) {
  return { at: Date.now() - elapsedMs, address: storableText(address), requestId: storableText(requestId), status, durationMs: elapsedMs }
}

function nullable (text: string | undefined | null): string | null {
  return text === undefined || text === null ? null : storableText(text)
}
