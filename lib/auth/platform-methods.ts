// What a caller may call, as the platform's whoami names it: the operations of each application
// (`AutomationStudio.getComponentGroups`, `NSOManager.restAction`, ...) and the paths. It is
// computed from the route table's own role requirements (the rule that authorises requests);
// only the names are kept here.
import { mayAct, type AuthUser, type Role } from './roles.js'

/** A route of the authenticated scope and the roles it needs (absent: any user). */
export interface GuardedRoute {
  method: string
  url: string
  roles?: readonly Role[]
}

// The application of a path's first segment: both the contract's and the platform's spelling.
const APPLICATIONS: Readonly<Record<string, string>> = {
  studio: 'AutomationStudio',
  'automation-studio': 'AutomationStudio',
  orchestrator_manager: 'NSOManager',
  nso_manager: 'NSOManager',
  configuration_manager: 'ConfigurationManager',
  users: 'Authorization',
  oauth: 'OAuth',
  git: 'Git'
}

// The platform's names of its operations, keyed by method and the path after the application's
// segment (parameters as `:`). An operation the platform does not have gets a name made from its
// method and path (see `operationName`).
const PLATFORM_NAMES: Readonly<Record<string, string>> = {
  'GET /component-groups': 'getComponentGroups',
  'GET /component-groups/:id': 'getComponentGroup',
  'POST /component-groups': 'createComponentGroup',
  'POST /component-groups/import': 'importComponentGroups',
  'PUT /component-groups/:id': 'updateComponentGroup',
  'DELETE /component-groups/:id': 'deleteComponentGroup',
  'POST /restAction/:adapterId': 'restAction',
  'POST /restQuery/:adapterId': 'restQuery',
  'POST /runAction/:adapterId': 'runAction',
  'GET /devices/:substring': 'getDevicesFiltered',
  'GET /devices/:adapterId/:substring': 'getDevicesFilteredForAdapter',
  'GET /neds/:adapterId': 'getNEDs',
  'GET /allNeds': 'getAllNEDs',
  'GET /authgroups/:adapterId': 'getAuthGroups',
  'GET /allAuthgroups': 'getAllAuthGroups',
  'POST /isAlive': 'isAlive',
  'POST /runCommand': 'runCommand',
  'POST /runCommands': 'runCommands',
  'POST /applyTemplates': 'applyTemplates',
  'POST /lockItem/:adapterId': 'addLockItem',
  'GET /adapters': 'getAdapters',
  'GET /adapters/:id': 'getAdapter',
  'POST /adapters': 'createAdapter',
  'PUT /adapters/:id': 'updateAdapter',
  'DELETE /adapters/:id': 'deleteAdapter',
  'GET /ismaintenance': 'isMaintenance',
  'GET ': 'getAccounts',
  'GET /:username': 'getAccount',
  'PUT /:username': 'updateAccount',
  'POST ': 'createAccount',
  'DELETE /:username': 'deleteAccount',
  'GET /serviceAccounts': 'getServiceAccounts',
  'POST /serviceAccounts': 'createServiceAccount',
  'PATCH /serviceAccounts/:client_id': 'updateServiceAccount',
  'PATCH /serviceAccounts/:client_id/regenerate': 'regenerateSecret',
  'DELETE /serviceAccounts/:client_id': 'deleteServiceAccount'
}

/** A route's path without a trailing slash (Fastify registers `/prefix/` for a plugin's `/`). */
function normalised (url: string): string {
  return url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url
}

/** `get` + the path's literal segments in camel case: `GET /git/:type/repos/:repo/branches` is `getReposBranches`. */
function madeName (method: string, segments: string[]): string {
  const words = segments.filter((s) => !s.startsWith(':')).flatMap((s) => s.split(/[^A-Za-z0-9]+/)).filter((w) => w !== '')
  return method.toLowerCase() + words.map((w) => w[0]?.toUpperCase() + w.slice(1)).join('')
}

/** The application and operation name of a route, as whoami's `methods` lists it. */
export function operationName (method: string, url: string): { application: string, name: string } {
  const segments = normalised(url).split('/').slice(1)
  const first = segments[0] ?? ''
  const application = APPLICATIONS[first]
  if (application === undefined) return { application: 'Authentication', name: madeName(method, segments) }
  const rest = segments.slice(1)
  const key = `${method} ${rest.length === 0 ? '' : `/${rest.join('/')}`}`
  return { application, name: PLATFORM_NAMES[key] ?? madeName(method, rest) }
}

/** The paths and operations `user` may call among `routes`, each once, in the route table's order. */
export function callable (user: AuthUser, routes: readonly GuardedRoute[]): { routes: string[], methods: Record<string, string[]> } {
  const paths = new Set<string>()
  const methods = new Map<string, Set<string>>()
  for (const route of routes) {
    if (route.method === 'HEAD' || !mayAct(user, route.roles)) continue
    paths.add(normalised(route.url))
    const { application, name } = operationName(route.method, route.url)
    const names = methods.get(application) ?? new Set<string>()
    names.add(name)
    methods.set(application, names)
  }
  return { routes: [...paths], methods: Object.fromEntries([...methods].map(([app, names]) => [app, [...names]])) }
}
