// The body of a restAction reply, `[{"result":"<status>","data":<upstream body>}]`, written as the
// orchestrator's answer arrives: JSON bytes are checked (lib/orchestrator/json-check.ts) and passed
// through as they are, any other type becomes a JSON string, escaped chunk by chunk. Nothing is
// parsed into objects and serialised again, so memory does not grow with the answer.
import { Transform, type TransformCallback } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { JsonChecker, MAX_JSON_DEPTH } from './json-check.js'
import { isJsonMediaType } from './relay-request.js'

/**
 * JSON answers up to this size are checked whole before the reply starts, so that invalid JSON is
 * a clean 502; a larger one starts streaming at this point, and an error found further on aborts
 * the reply mid-body.
 */
export const ACTION_HOLD_BYTES = 64 * 1024

export interface ActionBodyOptions {
  /** The orchestrator's status and Content-Type. */
  status: number
  contentType: string | undefined
  /** The error the stream fails with when the answer claims JSON and is not (or nests too deep). */
  invalidJson: (reason: string) => Error
  holdBytes?: number
  maxDepth?: number
}

/** A Transform from the orchestrator's body bytes to the restAction reply body. */
export function actionBody (options: ActionBodyOptions): Transform {
  return isJsonMediaType(options.contentType) ? new JsonActionBody(options) : new TextActionBody(options)
}

const head = (status: number): string => `[{"result":${JSON.stringify(String(status))}`

class JsonActionBody extends Transform {
  readonly #checker: JsonChecker
  readonly #invalid: (reason: string) => Error
  readonly #status: number
  readonly #holdBytes: number
  // Chunks checked but not yet sent; undefined once the reply has started.
  #held: Buffer[] | undefined = []
  #heldBytes = 0

  constructor (options: ActionBodyOptions) {
    super()
    this.#checker = new JsonChecker(options.maxDepth ?? MAX_JSON_DEPTH)
    this.#invalid = options.invalidJson
    this.#status = options.status
    this.#holdBytes = options.holdBytes ?? ACTION_HOLD_BYTES
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const problem = this.#checker.write(chunk)
    if (problem !== undefined) { callback(this.#invalid(problem)); return }
    if (this.#held === undefined) { callback(null, chunk); return }
    this.#held.push(chunk)
    this.#heldBytes += chunk.length
    if (this.#heldBytes >= this.#holdBytes) this.#release()
    callback()
  }

  override _flush (callback: TransformCallback): void {
    if (this.#checker.bytes === 0) { callback(null, head(this.#status) + '}]'); return }
    const problem = this.#checker.end()
    if (problem !== undefined) { callback(this.#invalid(problem)); return }
    if (this.#held !== undefined) this.#release()
    callback(null, '}]')
  }

  #release (): void {
    this.push(head(this.#status) + ',"data":')
    for (const chunk of this.#held ?? []) this.push(chunk)
    this.#held = undefined
  }
}

class TextActionBody extends Transform {
  readonly #decoder = new StringDecoder('utf8')
  readonly #status: number
  #started = false

  constructor (options: ActionBodyOptions) {
    super()
    this.#status = options.status
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (chunk.length === 0) { callback(); return }
    const text = escaped(this.#decoder.write(chunk))
    if (this.#started) { callback(null, text); return }
    this.#started = true
    callback(null, head(this.#status) + ',"data":"' + text)
  }

  override _flush (callback: TransformCallback): void {
    if (!this.#started) { callback(null, head(this.#status) + '}]'); return }
    callback(null, escaped(this.#decoder.end()) + '"}]')
  }
}

// The inside of a JSON string holding `text`. The decoder never splits a character, and turns
// bytes that are not UTF-8 into U+FFFD, so each piece escapes on its own.
const escaped = (text: string): string => text === '' ? '' : JSON.stringify(text).slice(1, -1)
