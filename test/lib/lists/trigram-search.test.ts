import t from 'tap'
import { containsTrigrams, selectiveContainsPart } from '../../../lib/lists/trigram-search.js'

// The trigrams every "Group N" name has, as pg_trgm's show_trgm prints them.
const GROUP = new Set(['  g', ' gr', 'gro', 'rou', 'oup', 'up '])

t.test('the trigrams pg_trgm extracts from ILIKE \'%value%\': words padded except at the ends', async (t) => {
  t.same([...containsTrigrams('oup 4242')].sort(), ['  4', ' 42', '242', '424', 'oup', 'up '])
  t.same([...containsTrigrams('Group')].sort(), ['gro', 'oup', 'rou'], 'lower-cased, no padding at either end')
  t.same([...containsTrigrams('a-b')], ['  b'], 'a one-letter word: a trigram only with the two blanks before it')
  t.same([...containsTrigrams('ab')], [], 'two letters alone: none')
  t.same([...containsTrigrams('%_\\')], [], 'no letters or digits: none')
})

t.test('the part looked up leaves out the frequent trigrams and keeps the most others', async (t) => {
  t.equal(selectiveContainsPart('oup 4242', GROUP), ' 4242', 'the blank before 4242 keeps its padded trigrams')
  t.equal(selectiveContainsPart('Group 4242', GROUP), ' 4242')
  t.equal(selectiveContainsPart('core group 12', GROUP), 'core ', 'of two clean parts, the one with more trigrams')
  t.equal(selectiveContainsPart('edge core group', GROUP), 'edge core ')
  t.equal(selectiveContainsPart('4242', GROUP), undefined, 'no frequent trigram: the value is looked up whole')
  t.equal(selectiveContainsPart('oup 4242', new Set()), undefined, 'no statistics: the value whole')
  t.equal(selectiveContainsPart('group', GROUP), undefined, 'every part frequent: the value whole')
  t.equal(selectiveContainsPart('group 1', GROUP), ' 1', 'a short word keeps the trigrams of its padding')
  t.equal(selectiveContainsPart('group😀4242', GROUP), '😀4242', 'a separator outside the BMP is taken whole, never half a surrogate pair')
  t.equal(selectiveContainsPart('groupé4242', GROUP), undefined, 'a letter outside ASCII is a letter: one word, frequent trigrams and all')
})

t.test('the part is always a piece of the value, so every name holding the value holds it', async (t) => {
  const values = ['oup 4242', 'a group of groups 7', 'x group', 'group-group_group%7', ' group 12 ', 'g r o u p', '😀 group 😀 42']
  for (const value of values) {
    const part = selectiveContainsPart(value, GROUP)
    if (part !== undefined) t.ok(value.includes(part) && part.length > 0, `"${part}" is in "${value}"`)
    else t.pass(`"${value}": looked up whole`)
  }
  const long = Array.from({ length: 128 }, (_, i) => (i % 2 === 0 ? 'group' : String(i))).join(' ').slice(0, 255)
  t.type(selectiveContainsPart(long, GROUP), 'string', 'a value of many words still gets an answer')
})
