// One upstream call on an undici dispatcher: its deadline, and a 2xx answer's body as a stream
// with backpressure down to the socket. plugins/orchestrator/client.ts starts these.
//
// Why a handler of undici's dispatch API and not its plain `request`: measured on a 479-byte
// RESTCONF answer (10 calls at once on a pool of 10, client-side CPU a call, medians of 10
// alternating rounds of 5,000 calls, load 26-30), this exchange cost 41 us, `pool.request` with
// an AbortSignal for the deadline and the body read whole 55 us, and `pool.request` without a
// deadline of its own (undici's once-a-second timers only) 45 us. The exchange also gives what
// `request` does not: the small answer resolved whole without a stream, an error body read up to
// its bound and the call then cut, a media type checked at the first body byte. docs/orchestrator.md.
import { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { isBodilessAnswer, isUpstreamSuccess, UPSTREAM_ERROR_BODY_MAX_BYTES, type UpstreamAnswer } from '../../lib/orchestrator/upstream.js'

/**
 * A 2xx answer whose body is still arriving. Reading `body` pulls it from the orchestrator
 * (backpressure reaches the socket); destroying it ends the call. When the exchange fails after
 * this point (deadline, connection lost, too large), `body` errors with the HttpError that says
 * so (504 or 502).
 */
export interface UpstreamResponse {
  status: number
  contentType: string | undefined
  /** The Content-Encoding the body is in (gzip...), when there was one: `body` is as it came. */
  contentEncoding: string | undefined
  /** The announced Content-Length, when there was one. */
  contentLength: number | undefined
  /** NSO's Location (RFC 8040 4.4.1: what a POST created), verbatim, when it sent one. */
  location?: string | undefined
  /** NSO's X-Cisco-NSO-Trace-ID, when it sent one. */
  traceId?: string | undefined
  /** The Set-Cookie lines, when there were any (a JSON-RPC login's session). */
  setCookie?: string[] | undefined
  /** The whole body, when the call asked for small answers whole (ExchangeOptions.wholeBelow) and this one was. */
  whole?: Buffer | undefined
  body: Readable
}

/** What a trace of the exchange hears (plugins/orchestrator/tracing.ts); absent when traces are off. */
export interface ExchangeTrace {
  /** A socket took the call, after any wait for a free connection of the pool. */
  connected: () => void
  /** The answer's status (the last one: 1xx are skipped). */
  status: (code: number) => void
  /** NSO's X-Cisco-NSO-Trace-ID of the answer, when it sent one. */
  nsoTraceId?: (id: string) => void
  /** The exchange is over, however it ended; `err` when it failed. */
  end: (err?: unknown) => void
}

export interface ExchangeOptions {
  resolve: (answer: UpstreamResponse | UpstreamAnswer) => void
  reject: (err: unknown) => void
  /** Called once when the exchange is over, however it ended. */
  done: () => void
  /**
   * The HttpError a failure after the status line becomes (`nsoStatus`: that status): the body
   * stream errors with it, or the call rejects with it when no body had started.
   */
  failure: (err: unknown, nsoStatus: number) => Error
  /** Whether a 2xx answer's Content-Type is what was asked for; one that is not fails when a body byte comes. */
  accepts: (contentType: string | undefined) => boolean
  /** The error of a 2xx answer whose body is of a type not asked for. */
  unexpectedType: (status: number, contentType: string | undefined) => Error
  timeoutMs: number
  /** A 2xx answer whose body ends within this many bytes resolves once complete, with `whole`. */
  wholeBelow?: number
  trace?: ExchangeTrace
}

/**
 * One upstream exchange, under a deadline that covers the whole of it (body included) and holds
 * to the millisecond, unlike undici's own header/body timers that tick about once a second.
 * A 2xx answer resolves at its headers with a body stream fed from here, paused and resumed with
 * its reader; an error status resolves once its body is read, up to UPSTREAM_ERROR_BODY_MAX_BYTES
 * (the call is then cut). A plain timer and undici's abort callback do this without an AbortSignal
 * per call.
 */
export class StreamingExchange implements Dispatcher.DispatchHandler {
  #abort: ((err?: Error) => void) | undefined
  #resume: (() => void) | undefined
  #timedOut: Error | undefined
  // Until resolve or reject has been called.
  #settled = false
  #finished = false
  readonly #timer: NodeJS.Timeout
  #status = 0
  #contentType: string | undefined
  #contentEncoding: string | undefined
  #contentLength: number | undefined
  #location: string | undefined
  #traceId: string | undefined
  #setCookie: string[] | undefined
  // A 2xx of a type not asked for: a success only if it turns out bodiless.
  #unexpected = false
  #body: UpstreamBody | undefined
  #errorChunks: Buffer[] | undefined
  #errorBytes = 0
  #paused = false
  // A 2xx body being gathered to be resolved whole (see ExchangeOptions.wholeBelow).
  #gathered: Buffer[] | undefined
  #gatheredBytes = 0

  constructor (private readonly options: ExchangeOptions) {
    this.#timer = setTimeout(() => {
      // Named like AbortSignal.timeout()'s reason, which lib/orchestrator/upstream.ts maps to 504.
      this.#timedOut = new DOMException(`no answer within ${options.timeoutMs} ms`, 'TimeoutError')
      this.#fail(this.#timedOut)
      this.#abort?.(this.#timedOut)
    }, options.timeoutMs)
  }

  onConnect (abort: (err?: Error) => void): void {
    // A call that waited for a free socket past its deadline is dropped before it is written.
    if (this.#timedOut !== undefined) abort(this.#timedOut)
    else {
      this.#abort = abort
      this.options.trace?.connected()
    }
  }

  onHeaders (statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // Called again after a 1xx: the last call is the answer.
    if (statusCode < 200) return true
    this.#status = statusCode
    this.options.trace?.status(statusCode)
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = (rawHeaders[i] as Buffer).toString('latin1').toLowerCase()
      if (name === 'content-type') this.#contentType = (rawHeaders[i + 1] as Buffer).toString('latin1')
      else if (name === 'content-encoding') {
        // Several header lines are one list (RFC 9110 5.3).
        const value = (rawHeaders[i + 1] as Buffer).toString('latin1')
        this.#contentEncoding = this.#contentEncoding === undefined ? value : `${this.#contentEncoding}, ${value}`
      } else if (name === 'content-length') {
        const length = Number((rawHeaders[i + 1] as Buffer).toString('latin1'))
        if (Number.isSafeInteger(length) && length >= 0) this.#contentLength = length
      } else if (name === 'location') this.#location = (rawHeaders[i + 1] as Buffer).toString('latin1')
      else if (name === 'x-cisco-nso-trace-id') this.#traceId = (rawHeaders[i + 1] as Buffer).toString('latin1')
      else if (name === 'set-cookie') (this.#setCookie ??= []).push((rawHeaders[i + 1] as Buffer).toString('latin1'))
    }
    if (this.#traceId !== undefined) this.options.trace?.nsoTraceId?.(this.#traceId)
    this.#resume = resume
    if (!isUpstreamSuccess(statusCode)) {
      this.#errorChunks = []
      return true
    }
    // Decided at the first body byte, or at the end when none comes (NSO's bodiless text/html 201).
    if (!isBodilessAnswer(statusCode, this.#contentLength) && !this.options.accepts(this.#contentType)) {
      this.#unexpected = true
      return true
    }
    const wholeBelow = this.options.wholeBelow ?? 0
    if (wholeBelow > 0 && (this.#contentLength === undefined || this.#contentLength <= wholeBelow)) {
      this.#gathered = []
      return true
    }
    this.#resolveSuccess()
    return true
  }

  #resolveSuccess (): UpstreamBody {
    const body = new UpstreamBody(this)
    this.#body = body
    this.#settled = true
    this.options.resolve(new Answer(this.#status, this.#contentType, this.#contentEncoding, this.#contentLength, this.#location, this.#traceId, this.#setCookie, body))
    return body
  }

  // The gathered body ended within the bound: the answer, whole (its stream made only if read).
  #resolveWhole (chunks: Buffer[]): void {
    this.#settled = true
    const whole = chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks)
    this.options.resolve(new Answer(this.#status, this.#contentType, this.#contentEncoding, this.#contentLength, this.#location, this.#traceId, this.#setCookie, whole))
  }

  // Past the bound: the answer streams, from the bytes gathered so far.
  #gatheredToStream (chunks: Buffer[]): boolean {
    this.#gathered = undefined
    const body = this.#resolveSuccess()
    let flowing = true
    for (const chunk of chunks) flowing = body.push(chunk)
    if (flowing) return true
    this.#paused = true
    return false
  }

  onData (chunk: Buffer): boolean {
    if (this.#unexpected) {
      if (this.#settled || chunk.length === 0) return true
      this.#settled = true
      this.#finish()
      this.options.reject(this.options.unexpectedType(this.#status, this.#contentType))
      this.#abort?.(new Error('an answer of a media type not asked for'))
      return false
    }
    if (this.#body !== undefined) {
      if (this.#body.push(chunk)) return true
      this.#paused = true
      return false
    }
    const gathered = this.#gathered
    if (gathered !== undefined) {
      if (this.#settled) return true
      gathered.push(chunk)
      this.#gatheredBytes += chunk.length
      return this.#gatheredBytes <= (this.options.wholeBelow ?? 0) || this.#gatheredToStream(gathered)
    }
    if (this.#errorChunks === undefined || this.#settled) return true
    const room = UPSTREAM_ERROR_BODY_MAX_BYTES - this.#errorBytes
    if (chunk.length <= room) {
      this.#errorChunks.push(chunk)
      this.#errorBytes += chunk.length
      return true
    }
    // Enough of an error body: keep what fits, answer with it and cut the call.
    this.#errorChunks.push(chunk.subarray(0, room))
    this.#errorBytes += room
    this.#answerError(true)
    this.#abort?.(new Error('upstream error body read up to its limit'))
    return false
  }

  // undici never completes a request it aborted, so this runs only once and only while unsettled
  // or streaming.
  onComplete (): void {
    const gathered = this.#gathered
    if (gathered !== undefined) {
      if (this.#finish()) this.#resolveWhole(gathered)
      return
    }
    if (this.#unexpected && this.#body === undefined) this.#resolveSuccess()
    if (this.#body !== undefined) {
      if (this.#finish()) this.#body.push(null)
      return
    }
    this.#answerError(false)
  }

  onError (err: Error): void {
    this.#fail(err)
  }

  /** The reader wants more. */
  resume (): void {
    if (!this.#paused) return
    this.#paused = false
    this.#resume?.()
  }

  /** The reader went away (or the body failed): stop the call if it is still running. */
  cancel (): void {
    if (this.#finish()) this.#abort?.(new Error('the relayed answer is no longer read'))
  }

  #answerError (truncated: boolean): void {
    if (this.#settled) return
    this.#settled = true
    this.#finish()
    const chunks = this.#errorChunks ?? []
    const body = chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks)
    this.options.resolve({
      status: this.#status,
      contentType: this.#contentType,
      contentEncoding: this.#contentEncoding,
      ...(this.#traceId === undefined ? {} : { traceId: this.#traceId }),
      body,
      ...(truncated ? { truncated } : {})
    })
  }

  #fail (err: unknown): void {
    if (!this.#finish(err)) return
    if (!this.#settled) {
      this.#settled = true
      // After the status line the orchestrator got the request: the error says what it answered.
      this.options.reject(this.#status === 0 ? err : this.options.failure(err, this.#status))
      return
    }
    // Mid-body: the reader sees the failure as the stream's error.
    this.#body?.destroy(this.options.failure(err, this.#status))
  }

  /** Ends the exchange's bookkeeping; false when it had already ended. */
  #finish (err?: unknown): boolean {
    if (this.#finished) return false
    this.#finished = true
    clearTimeout(this.#timer)
    this.options.done()
    this.options.trace?.end(err)
    return true
  }
}

/**
 * A 2xx answer: one shape for every answer, so that reading one is a plain property load. A
 * whole one (`whole`) makes its `body` stream only when a reader asks for one.
 */
class Answer implements UpstreamResponse {
  /** Set when the body came whole; `body` then streams it only when read. */
  readonly whole: Buffer | undefined
  #body: Readable | undefined

  constructor (
    readonly status: number,
    readonly contentType: string | undefined,
    readonly contentEncoding: string | undefined,
    readonly contentLength: number | undefined,
    readonly location: string | undefined,
    readonly traceId: string | undefined,
    readonly setCookie: string[] | undefined,
    /** The body: a stream as it arrives, or the whole of it. */
    content: Readable | Buffer
  ) {
    if (Buffer.isBuffer(content)) this.whole = content
    else this.#body = content
  }

  get body (): Readable {
    this.#body ??= Readable.from([this.whole])
    return this.#body
  }
}

/** The body of a 2xx answer as it arrives; see UpstreamResponse. */
class UpstreamBody extends Readable {
  constructor (private readonly exchange: StreamingExchange) {
    // As much as one socket read, so that a reader keeping up never pauses the socket.
    super({ highWaterMark: 64 * 1024 })
  }

  override _read (): void {
    this.exchange.resume()
  }

  override _destroy (err: Error | null, callback: (error?: Error | null) => void): void {
    this.exchange.cancel()
    callback(err)
  }
}
