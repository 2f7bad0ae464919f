// SQL text and the values it carries, written together. A value in a `sql` template becomes a
// parameter; its number ($1, $2, ...) is given where the statement is written, in the order of
// its text, so a statement carries exactly the parameters it names. A `param()` written more than
// once (a key in two arms, a bound in the page and its count) keeps its one number.
// Text that is not a value (a column, a table, a direction) comes from the repository, never from
// a request, and goes in as `raw()` text.

/** A value to send as a parameter, numbered once per statement wherever it is written. */
export class Param {
  constructor (readonly value: unknown) {}
}

/** A piece of SQL: text, parameters and other pieces, in order. */
export class Sql {
  constructor (readonly parts: ReadonlyArray<string | Param | Sql>) {}
}

export interface Statement {
  text: string
  params: unknown[]
}

export const param = (value: unknown): Param => new Param(value)

/** Trusted SQL text, taken as it is: never a value from a request. */
export const raw = (text: string): Sql => new Sql([text])

/** SQL from a template: each `${...}` a piece of SQL, a Param, or else a value sent as a new parameter. */
export function sql (strings: TemplateStringsArray, ...values: unknown[]): Sql {
  const parts: Array<string | Param | Sql> = []
  for (let i = 0; i < strings.length; i++) {
    const text = strings[i] as string
    if (text !== '') parts.push(text)
    if (i < values.length) {
      const value = values[i]
      parts.push(value instanceof Sql || value instanceof Param ? value : new Param(value))
    }
  }
  return new Sql(parts)
}

/** The pieces with `separator` (trusted text) between them. */
export function join (pieces: readonly Sql[], separator: string): Sql {
  const parts: Array<string | Sql> = []
  for (const piece of pieces) {
    if (parts.length > 0) parts.push(separator)
    parts.push(piece)
  }
  return new Sql(parts)
}

/** The statement's text, its parameters numbered from $1 in the order the text names them. */
export function statement (query: Sql): Statement {
  const params: unknown[] = []
  const numbers = new Map<Param, number>()
  // A piece written again (the page inside its byte bound's pass and again for its rows) reads
  // the same: its parameters have their numbers already.
  const written = new Map<Sql, string>()
  const write = (piece: Sql): string => {
    let text = written.get(piece)
    if (text !== undefined) return text
    text = ''
    for (const part of piece.parts) {
      if (typeof part === 'string') text += part
      else if (part instanceof Sql) text += write(part)
      else {
        let number = numbers.get(part)
        if (number === undefined) {
          number = params.push(part.value)
          numbers.set(part, number)
        }
        text += `$${number}`
      }
    }
    written.set(piece, text)
    return text
  }
  return { text: write(query), params }
}

/** A LIKE/ILIKE pattern: `text` taken literally (escape character `\`) with `%` where `before` / `after` say. */
export function likePattern (text: string, before: boolean, after: boolean): string {
  const literal = text.replace(/[\\%_]/g, (c) => `\\${c}`)
  return `${before ? '%' : ''}${literal}${after ? '%' : ''}`
}
