/** A route's hooks of one kind as an array: Fastify accepts none, one function or an array. */
export function hookList<T> (hooks: T | readonly T[] | undefined): T[] {
  if (hooks === undefined) return []
  return Array.isArray(hooks) ? [...hooks as readonly T[]] : [hooks as T]
}
