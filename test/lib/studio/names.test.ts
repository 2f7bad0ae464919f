import t from 'tap'
import fc from 'fast-check'
import { nameAllocator, suffixedName, suffixedNamesPattern } from '../../../lib/studio/names.js'
import { propertyRuns } from '../../helpers/property-runs.js'

t.test('a taken name gets " (n)"', async (t) => {
  t.equal(suffixedName('Core', 0, 255), 'Core')
  t.equal(suffixedName('Core', 1, 255), 'Core (1)')
  t.equal(suffixedName('Core (1)', 2, 255), 'Core (1) (2)')
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

t.test('names are given out in order, skipping those taken or already given', async (t) => {
  const used = new Set<string>(['Core (2)'])
  const next = nameAllocator('Core', new Set(['Core', 'Core (1)', 'Core (4)']), used, 255)
  t.same([next(), next(), next()], ['Core (3)', 'Core (5)', 'Core (6)'])
  t.ok(used.has('Core (3)') && used.has('Core (6)'), 'what it gives out is used')
  const fresh = nameAllocator('Edge', new Set(), new Set(), 255)
  t.equal(fresh(), 'Edge', 'a free name keeps no suffix')
})

// LIKE as PostgreSQL reads it with ESCAPE '\', for checking the pattern without a database.
function like (pattern: string, text: string): boolean {
  let source = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string
    if (c === '\\') source += (pattern[++i] ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    else if (c === '%') source += '[\\s\\S]*'
    else if (c === '_') source += '[\\s\\S]'
    else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${source}$`, 'u').test(text)
}

t.test('the look-up pattern of a base matches every suffixed form of it', async (t) => {
  fc.assert(fc.property(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 9_999_999_999 }),
    (base, n) => {
      const trimmed = Array.from(base).slice(0, 255).join('')
      return like(suffixedNamesPattern(trimmed, 255), suffixedName(trimmed, n, 255))
    }), { numRuns: propertyRuns(60) })
  t.equal(suffixedNamesPattern('50%_off', 255), '50\\%\\_off (%', 'metacharacters taken literally')
  t.notOk(like(suffixedNamesPattern('Core', 255), 'Core routers'), 'another name with the same start is not looked up')
})
