import t from 'tap'
import { containsPattern, nameCandidates, suffixedName } from '../../../lib/studio/names.js'

t.test('a taken name gets " (n)"', async (t) => {
  t.equal(suffixedName('Core', 0, 255), 'Core')
  t.equal(suffixedName('Core', 1, 255), 'Core (1)')
  t.equal(suffixedName('Core (1)', 2, 255), 'Core (1) (2)')
  t.same(nameCandidates('Core', 0, 3, 255), ['Core', 'Core (1)', 'Core (2)'])
  t.same(nameCandidates('Core', 20, 2, 255), ['Core (20)', 'Core (21)'])
})

t.test('the suffixed name still fits the limit, shortening the base by whole characters', async (t) => {
  t.equal(suffixedName('abcdefgh', 1, 10), 'abcdef (1)')
  t.equal(suffixedName('abcdefgh', 12, 10), 'abcde (12)')
  t.equal(suffixedName('abcdef', 1, 10), 'abcdef (1)', 'no shortening when it fits')
  const emoji = '😀'.repeat(8) // 8 characters, 16 UTF-16 units
  const named = suffixedName(emoji, 1, 10)
  t.equal(named, '😀'.repeat(6) + ' (1)')
  t.equal(Array.from(named).length, 10)
  t.notOk(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(named), 'no half surrogate pair')
  for (let n = 1; n < 200; n++) t.ok(Array.from(suffixedName('x'.repeat(255), n, 255)).length <= 255)
})

t.test('a contains pattern takes LIKE metacharacters literally', async (t) => {
  t.equal(containsPattern('core'), '%core%')
  t.equal(containsPattern('50%_off'), '%50\\%\\_off%')
  t.equal(containsPattern('a\\b'), '%a\\\\b%')
})
