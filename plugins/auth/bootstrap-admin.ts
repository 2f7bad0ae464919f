import type { FastifyInstance } from 'fastify'
import { generatePassword } from '../../lib/auth/passwords.js'

/** On the first start (no user at all), creates the admin of ADMIN_USERNAME / ADMIN_PASSWORD. */
export async function bootstrapAdmin (fastify: FastifyInstance): Promise<void> {
  const { ADMIN_USERNAME, ADMIN_PASSWORD } = fastify.config
  if (await fastify.usersRepository.count() > 0) return
  const password = ADMIN_PASSWORD ?? generatePassword()
  const created = await fastify.usersRepository.create(
    { username: ADMIN_USERNAME, password, roles: ['admin'], groups: [] }, { ifNoUsers: true })
  if (created === undefined) return // another instance made the first user meanwhile
  fastify.log.warn({ username: ADMIN_USERNAME }, 'created the bootstrap admin user')
  if (ADMIN_PASSWORD === undefined) {
    // Printed once, outside the (redacted) log, so the operator can log in and change it.
    process.stdout.write(`Generated password for the bootstrap admin "${ADMIN_USERNAME}": ${password}\n` +
      'Store it now: it is not shown again. Change it with PUT /users/' + ADMIN_USERNAME + '\n')
  }
}
