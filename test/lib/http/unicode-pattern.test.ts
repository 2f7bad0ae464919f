import t from 'tap'
import { Ajv } from 'ajv'
import { UNICODE_PATTERN_KEYWORD, unicodePatternKeyword } from '../../../lib/http/unicode-pattern.js'

t.test('x-unicode-pattern: the rule a portable pattern cannot say, checked with the u flag', async (t) => {
  const ajv = new Ajv({ keywords: [unicodePatternKeyword] })
  const validate = ajv.compile({ type: 'string', [UNICODE_PATTERN_KEYWORD]: '^\\p{L}+$' })
  t.ok(validate('Zürich'), 'letters of any script')
  t.ok(validate('ＮＳＯ'))
  t.notOk(validate('nso-1'), 'anything else refused')
  t.match(validate.errors, [{ keyword: UNICODE_PATTERN_KEYWORD, message: /naming rule/ }])
  t.ok(validate('Genève'), 'the compiled pattern is reused')
})
