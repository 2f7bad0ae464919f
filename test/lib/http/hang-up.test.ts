import t from 'tap'
import { Socket } from 'node:net'
import { callerHungUp } from '../../../lib/http/hang-up.js'

t.test('a caller has hung up when its socket is destroyed, not before; no socket is no hang-up', async (t) => {
  const socket = new Socket()
  const request = { raw: { socket } }
  t.equal(callerHungUp(request), false)
  socket.destroy()
  t.equal(callerHungUp(request), true)
  t.equal(callerHungUp({ raw: { socket: null as unknown as Socket } }), false)
})
