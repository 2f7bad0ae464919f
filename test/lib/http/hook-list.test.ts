import t from 'tap'
import { hookList } from '../../../lib/http/hook-list.js'

t.test('hookList turns none, one or many hooks into a new array', async (t) => {
  const a = (): void => {}
  const b = (): void => {}
  t.same(hookList(undefined), [])
  t.same(hookList(a), [a])
  const many = [a, b]
  const list = hookList(many)
  t.same(list, [a, b])
  t.not(list, many, 'a copy: adding to it leaves the route options as they were')
})
