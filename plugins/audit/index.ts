// The audit trail: `request.audit(action, target, details?)` marks a request as one to record;
// an onResponse hook records it (and every denied request) with its outcome, status and duration,
// onto a bounded in-memory queue that one flusher writes in batches (lib/audit/queue.ts);
// retention removes old events in small batches on a timer. See docs/audit.md.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import client from 'prom-client'
import { AsyncResource } from 'node:async_hooks'
import { setImmediate as yieldTurn } from 'node:timers/promises'
import { AuditQueue } from '../../lib/audit/queue.js'
import {
  isDenied, outcomeOf, storableDetails, storableText, type AuditActor, type AuditDetails, type AuditEvent
} from '../../lib/audit/events.js'
import { parseBasicAuthorization } from '../../lib/auth/basic-auth-header.js'
import type { AuthUser, RequestAuth } from '../../lib/auth/roles.js'
import { auditEventsRepository, type AuditEventsRepository } from './events-repository.js'
import { pathOf } from '../../lib/http/public-url.js'
import { hookList } from '../../lib/http/hook-list.js'
import { callerHungUp } from '../../lib/http/hang-up.js'

/** Events held in memory at most (about 1 KiB each, texts bounded): past it they are dropped and counted. */
export const AUDIT_MAX_QUEUED = 20_000
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
  }
  interface FastifyInstance {
    audit: {
      readonly enabled: boolean
      repository: AuditEventsRepository
      /** Writes what is queued now. */
      flush: () => Promise<void>
      /** Deletes events past AUDIT_RETENTION_DAYS, a batch at a time; how many. */
      prune: () => Promise<{ deleted: number, batches: number }>
      state: () => { queued: number, written: number, dropped: number, writeFailures: number }
    }
  }
}

// What a request's pending event becomes once it is recorded.
const RECORDED: PendingEvent = Object.freeze({ address: '', action: '', target: '', details: null, actor: null })

export default fp(async (fastify) => {
  const { AUDIT_ENABLED: enabled, AUDIT_RETENTION_DAYS: retentionDays } = fastify.config
  const repository = auditEventsRepository(fastify.db)
  let lastDropLog = 0
  const queue = new AuditQueue<AuditEvent>({
    maxQueued: AUDIT_MAX_QUEUED,
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

  fastify.decorateRequest('auditPending', null)
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
    if (pending === RECORDED || (pending === null && !isDenied(status))) return
    // Once per request, whichever hook comes first.
    request.auditPending = RECORDED
    // Set by the auth plugin on authenticated routes only; null elsewhere.
    const user = request.user as AuthUser | null
    const auth = request.auth as RequestAuth | null
    const event: AuditEvent = pending === null
      ? {
          ...base(request.id, request.ip ?? '', status, reply.elapsedTime),
          // A failed Basic login names its user; a token names none (usernames are no secret).
          actor: user?.username ?? nullable(parseBasicAuthorization(request.headers.authorization)?.username),
          serviceAccount: nullable(auth?.clientId),
          action: 'request.denied',
          target: storableText(`${request.method} ${pathOf(request.url)}`),
          outcome: 'denied',
          details: null
        }
      : {
          ...base(request.id, pending.address, status, reply.elapsedTime),
          actor: nullable(pending.actor?.user ?? user?.username),
          serviceAccount: nullable(pending.actor?.serviceAccount ?? auth?.clientId),
          action: storableText(pending.action),
          target: storableText(pending.target),
          outcome: outcomeOf(status),
          details: storableDetails(pending.details)
        }
    if (!queue.push(event) && Date.now() - lastDropLog > DROP_LOG_INTERVAL_MS) {
      lastDropLog = Date.now()
      fastify.log.error({ dropped: queue.state().dropped }, 'audit events dropped: the queue is full (the database is down or slower than requests)')
    }
  }

  if (enabled) {
    fastify.addHook('onResponse', (request, reply, done) => {
      record(request, reply)
      done()
    })
    // Fastify runs no onResponse hook for an answer whose caller hung up before it was written:
    // a write finished after its caller left (an action the orchestrator carried out, a change
    // committed) is recorded as its answer is sent, on the routes that can write. Reads pay nothing.
    const recordIfCallerLeft: onSendHookHandler = function (request, reply, payload, done) {
      if (callerHungUp(request)) record(request, reply)
      done(null, payload)
    }
    fastify.addHook('onRoute', (route) => {
      const methods = [route.method].flat()
      if (methods.every((method) => method === 'GET' || method === 'HEAD')) return
      route.onSend = [...hookList(route.onSend), recordIfCallerLeft]
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

  fastify.decorate('audit', {
    enabled,
    repository,
    flush: async () => { await queue.flush() },
    prune,
    state: () => queue.state()
  })

  fastify.addHook('onClose', async () => {
    closing = true
    clearInterval(pruneTimer)
    await pruning?.catch(() => {})
    const { lost } = await queue.close()
    if (lost > 0) fastify.log.error({ lost }, 'audit events lost at close: the database could not take them')
  })

  new client.Counter({
    name: 'audit_events_total',
    help: 'Audit events by fate: written, or dropped (queue full, or the database down at close)',
    labelNames: ['fate'],
    registers: [fastify.metricsRegistry],
    collect () {
      const { written, dropped } = queue.state()
      this.reset()
      this.inc({ fate: 'written' }, written)
      this.inc({ fate: 'dropped' }, dropped)
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
