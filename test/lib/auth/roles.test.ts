import t from 'tap'
import { ADMINS, WRITERS, mayAct, toAuthUser } from '../../../lib/auth/roles.js'

t.test('a route open to some roles: any one of them, and admin always', async (t) => {
  const user = (roles: Array<'admin' | 'designer' | 'apiwrite'>) => ({ username: 'u', roles, groups: [], email: null })
  t.ok(mayAct(user([]), undefined), 'no roles named: any user')
  t.notOk(mayAct(user([]), WRITERS))
  t.ok(mayAct(user(['apiwrite']), WRITERS))
  t.notOk(mayAct(user(['designer']), ADMINS))
  t.ok(mayAct(user(['admin']), ['designer']), 'admin always may')
})

t.test('the caller keeps the fields routes read, nothing else', async (t) => {
  const caller = toAuthUser({ username: 'ann', roles: ['designer'], groups: ['netops'], email: null, disabled: false, createdAt: '', updatedAt: '' })
  t.same(caller, { username: 'ann', roles: ['designer'], groups: ['netops'], email: null })
})
