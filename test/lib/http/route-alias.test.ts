import t from 'tap'
import { aliasSchema, operationId } from '../../../lib/http/route-alias.js'

t.test('operation ids from a method and a path', async (t) => {
  t.equal(operationId('GET', '/automation-studio/component-groups'), 'getAutomationStudioComponentGroups')
  t.equal(operationId('POST', '/nso_manager/restQuery/:adapterId'), 'postNsoManagerRestQueryByAdapterId')
  t.equal(operationId('DELETE', '/nso_manager/adapters/:id/'), 'deleteNsoManagerAdaptersById')
})

t.test('an alias keeps the schema, marks its documentation and points at the primary path', async (t) => {
  const body = { type: 'object' }
  const alias = aliasSchema({ summary: 'Get one', description: 'More.', tags: ['studio'], body },
    { method: 'GET', url: '/automation-studio/component-groups/:id', primaryUrl: '/studio/component-groups/:id', tag: 'platform paths' })
  t.equal(alias.body, body, 'validation is untouched')
  t.same(alias.tags, ['platform paths'])
  t.equal(alias.summary, 'Get one (platform path)')
  t.equal(alias.description, 'The platform\'s path for `GET /studio/component-groups/:id`: same handler, same answers.\n\nMore.')
  t.equal(alias.operationId, 'getAutomationStudioComponentGroupsById')
  const bare = aliasSchema(undefined, { method: 'POST', url: '/nso_manager/x', primaryUrl: '/orchestrator_manager/x', tag: 'platform paths' })
  t.equal(bare.summary, 'POST /orchestrator_manager/x (platform path)')
  t.equal(bare.description, 'The platform\'s path for `POST /orchestrator_manager/x`: same handler, same answers.')
})
