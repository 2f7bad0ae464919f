import t from 'tap'
import { toErrorBody } from '../../../lib/http/errors.js'
import { refusalError } from '../../../lib/studio/outcomes.js'

const ID = '0123456789abcdef01234567'

t.test('each refusal of a write is answered with its status, code and message', async (t) => {
  t.same(toErrorBody(refusalError('not-found', ID)),
    { statusCode: 404, error: 'Not Found', message: `Component group "${ID}" not found`, code: 'COMPONENT_GROUP_NOT_FOUND' })
  t.same(toErrorBody(refusalError('forbidden', ID)),
    { statusCode: 403, error: 'Forbidden', message: `Component group "${ID}" may only be changed by its gbacWrite groups`, code: 'COMPONENT_GROUP_WRITE_FORBIDDEN' })
  t.same(toErrorBody(refusalError('stale', ID)), {
    statusCode: 409,
    error: 'Conflict',
    message: `Component group "${ID}" has changed since the version given (If-Match or update.version): read it again, then retry`,
    code: 'VERSION_CONFLICT'
  })
  t.same(toErrorBody(refusalError('changed', ID)),
    { statusCode: 409, error: 'Conflict', message: `Component group "${ID}" changed while it was being written: retry`, code: 'VERSION_CONFLICT' })
  t.same(toErrorBody(refusalError('name-taken', ID, 'Core')),
    { statusCode: 409, error: 'Conflict', message: 'A component group named "Core" already exists', code: 'NAME_TAKEN' })
  t.same(toErrorBody(refusalError('name-taken', ID)),
    { statusCode: 409, error: 'Conflict', message: 'Another component group has this name', code: 'NAME_TAKEN' }, 'an import names no name')
})
