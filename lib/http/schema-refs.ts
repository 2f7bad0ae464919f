/**
 * The shared schemas one schema refers to, directly or through each other. Fastify hands every
 * response serialiser all of the service's shared schemas, and fast-json-stringify checks and
 * indexes each of them again for every serialiser it builds (some 1,300 of them: each operation's
 * statuses at both path prefixes), which made most of the service's start-up CPU. Given only the
 * ones a schema reaches, each build costs what that schema needs.
 */
export function referencedSchemas (schema: unknown, shared: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const reached: Record<string, unknown> = {}
  const pending: unknown[] = [schema]
  const seen = new Set<unknown>()
  while (pending.length > 0) {
    const node = pending.pop()
    if (node === null || typeof node !== 'object' || seen.has(node)) continue
    seen.add(node)
    if (Array.isArray(node)) {
      pending.push(...node)
      continue
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const id = value.split('#', 1)[0]
        if (id !== '' && !(id in reached) && Object.hasOwn(shared, id)) {
          reached[id] = shared[id]
          pending.push(shared[id])
        }
      } else {
        pending.push(value)
      }
    }
  }
  return reached
}
