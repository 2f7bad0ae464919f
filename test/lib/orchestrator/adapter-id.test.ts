import t from 'tap'
import fc from 'fast-check'
import { foldAdapterId } from '../../../lib/orchestrator/adapter-id.js'
import { ADAPTER_ID_PATTERN } from '../../../schemas/orchestrator.js'
import { adapterIdArb, lookAlikeOf } from './adapter-id-arbitraries.js'
import { propertyRuns } from '../../helpers/property-runs.js'

const validId = new RegExp(ADAPTER_ID_PATTERN, 'u')

t.test('folding: the examples', async (t) => {
  const same: Array<[string, string]> = [
    ['Local NSO', 'Local  NSO'],
    ['Local NSO', 'local nso'],
    ['Local NSO', 'Ｌｏｃａｌ ＮＳＯ'],
    ['Local NSO', 'Local\u3000NSO'],
    ['Zürich', 'Zu\u0308rich'],
    ['Zürich', 'ZÜRICH'],
    ['Straße', 'STRASSE'],
    ['ΟΔΟΣ', 'οδος'],
    ['nso-lab_2', 'NSO-LAB_2']
  ]
  for (const [a, b] of same) t.equal(foldAdapterId(a), foldAdapterId(b), `${a} ~ ${b}`)
  const different: Array<[string, string]> = [['nso-1', 'nso-2'], ['nso lab', 'nso-lab'], ['nso lab', 'nsolab'], ['Zürich', 'Zurich']]
  for (const [a, b] of different) t.not(foldAdapterId(a), foldAdapterId(b), `${a} is not ${b}`)
  t.equal(foldAdapterId('Local  NSO'), 'local nso')
})

t.test('folding is idempotent, on any text', async () => {
  fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 40, unit: 'binary' }), adapterIdArb), (s) => {
    const key = foldAdapterId(s)
    return foldAdapterId(key) === key
  }), { numRuns: propertyRuns(1000) })
})

t.test('look-alikes fold to one key', async () => {
  fc.assert(fc.property(adapterIdArb.chain((id) => fc.tuple(fc.constant(id), lookAlikeOf(id))), ([id, alike]) => {
    return foldAdapterId(id) === foldAdapterId(alike)
  }), { numRuns: propertyRuns(400) })
})

t.test('the generators make valid ids', async () => {
  fc.assert(fc.property(adapterIdArb, (id) => validId.test(id)))
})
