// The OpenAPI description of a route served under a second, platform-compatible path: same
// handler, same schema for validation, but documented as an alias of the contract's path with an
// operationId of its own (OpenAPI requires them unique across the document).

/** The documentation fields of a route schema that an alias changes (the rest is kept as is). */
export interface AliasedSchema {
  summary?: string
  description?: string
  tags?: readonly string[]
  operationId?: string
}

/** An operationId from a method and a path: `get /nso_manager/adapters/:id` -> `getNsoManagerAdaptersById`. */
export function operationId (method: string, url: string): string {
  const words = url.split(/[^A-Za-z0-9:]+/).filter((w) => w !== '')
    .map((w) => w.startsWith(':') ? `By${w.slice(1, 2).toUpperCase()}${w.slice(2)}` : `${w.slice(0, 1).toUpperCase()}${w.slice(1)}`)
  return `${method.toLowerCase()}${words.join('')}`
}

/**
 * The schema of an alias route: tagged `tag`, its summary marked as the platform's path and its
 * description pointing at the contract's path, which stays the primary one.
 */
export function aliasSchema<S extends object> (schema: S | undefined, alias: { method: string, url: string, primaryUrl: string, tag: string }): S & AliasedSchema {
  const base = (schema ?? {}) as S & AliasedSchema
  const note = `The platform's path for \`${alias.method} ${alias.primaryUrl}\`: same handler, same answers.`
  return {
    ...base,
    tags: [alias.tag],
    summary: `${base.summary ?? `${alias.method} ${alias.primaryUrl}`} (platform path)`,
    description: base.description === undefined ? note : `${note}\n\n${base.description}`,
    operationId: operationId(alias.method, alias.url)
  }
}
