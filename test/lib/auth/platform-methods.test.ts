import t from 'tap'
import { callable, operationName, type GuardedRoute } from '../../../lib/auth/platform-methods.js'
import { WRITERS, ADMINS, type AuthUser } from '../../../lib/auth/roles.js'

const user = (roles: AuthUser['roles']): AuthUser => ({ username: 'u', roles, groups: [], email: null })

t.test('operations are named as the platform names them, under both spellings of an application', async (t) => {
  t.same(operationName('GET', '/studio/component-groups/'), { application: 'AutomationStudio', name: 'getComponentGroups' })
  t.same(operationName('GET', '/automation-studio/component-groups/:id'), { application: 'AutomationStudio', name: 'getComponentGroup' })
  t.same(operationName('POST', '/nso_manager/restAction/:adapterId'), { application: 'NSOManager', name: 'restAction' })
  t.same(operationName('POST', '/orchestrator_manager/restQuery/:adapterId'), { application: 'NSOManager', name: 'restQuery' })
  t.same(operationName('GET', '/configuration_manager/ismaintenance'), { application: 'ConfigurationManager', name: 'isMaintenance' })
  t.same(operationName('GET', '/users/'), { application: 'Authorization', name: 'getAccounts' })
  t.same(operationName('PATCH', '/oauth/serviceAccounts/:client_id/regenerate'), { application: 'OAuth', name: 'regenerateSecret' })
})

t.test('an operation the platform lacks gets a name from its method and literal segments', async (t) => {
  t.same(operationName('GET', '/git/:gitType/repos/:repoPath/branches'), { application: 'Git', name: 'getReposBranches' })
  t.same(operationName('POST', '/git/:gitType/repos'), { application: 'Git', name: 'postRepos' })
  t.same(operationName('GET', '/whoami'), { application: 'Authentication', name: 'getWhoami' })
  t.same(operationName('POST', '/logout'), { application: 'Authentication', name: 'postLogout' })
  t.same(operationName('GET', '/'), { application: 'Authentication', name: 'get' })
})

t.test('what a caller may call follows the roles of each route; HEAD and repeats are left out', async (t) => {
  const routes: GuardedRoute[] = [
    { method: 'GET', url: '/studio/component-groups/' },
    { method: 'HEAD', url: '/studio/component-groups/' },
    { method: 'POST', url: '/studio/component-groups/', roles: WRITERS },
    { method: 'GET', url: '/automation-studio/component-groups/' },
    { method: 'POST', url: '/nso_manager/restAction/:adapterId', roles: ADMINS },
    { method: 'GET', url: '/whoami' }
  ]
  t.same(callable(user([]), routes), {
    routes: ['/studio/component-groups', '/automation-studio/component-groups', '/whoami'],
    methods: { AutomationStudio: ['getComponentGroups'], Authentication: ['getWhoami'] }
  })
  t.same(callable(user(['designer']), routes).methods, { AutomationStudio: ['getComponentGroups', 'createComponentGroup'], Authentication: ['getWhoami'] })
  const admin = callable(user(['admin']), routes)
  t.same(admin.methods.NSOManager, ['restAction'])
  t.ok(admin.routes.includes('/nso_manager/restAction/:adapterId'))
})
