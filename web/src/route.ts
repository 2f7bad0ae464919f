// The page's hash routes, as the service's edit links have them:
// `#/edit?tab=0&component-group=<id>` (editor), `tab=1` (history), `#/` or nothing (the list).
export type Route =
  | { view: 'list' }
  | { view: 'edit', id: string, tab: 0 | 1 }

export function parseRoute (hash: string): Route {
  const text = hash.replace(/^#/, '')
  const [path = '', query = ''] = text.split('?', 2)
  if (path === '/edit') {
    const params = new URLSearchParams(query)
    const id = params.get('component-group') ?? ''
    return { view: 'edit', id, tab: params.get('tab') === '1' ? 1 : 0 }
  }
  return { view: 'list' }
}

export const editHash = (id: string, tab: 0 | 1 = 0): string => `#/edit?tab=${tab}&component-group=${encodeURIComponent(id)}`
export const LIST_HASH = '#/'
