import t from 'tap'
import { join, likePattern, param, raw, sql, statement } from '../../../lib/lists/sql.js'

t.test('values become parameters numbered in the order the text names them', async (t) => {
  const key = param('k')
  const arm = sql`group_id = ${key} AND name = ${"x'; DROP TABLE t; --"}`
  const query = sql`SELECT ${raw('id, name')} FROM t WHERE ${arm} OR parent = ${key} LIMIT ${25}`
  t.same(statement(query), { text: 'SELECT id, name FROM t WHERE group_id = $1 AND name = $2 OR parent = $1 LIMIT $3', params: ['k', "x'; DROP TABLE t; --", 25] },
    'a param written twice keeps its number; a value never enters the text')
  t.same(statement(sql`SELECT ${'a'}, ${'a'}`), { text: 'SELECT $1, $2', params: ['a', 'a'] }, 'equal values written apart are two parameters')
  t.same(statement(sql`x IN (${['a', 'b']}::text[])`).params, [['a', 'b']], 'an array is one parameter')
})

t.test('each statement numbers its own parameters from $1, carrying only those it names', async (t) => {
  const limit = param(10)
  const bound = param(1010)
  const filter = sql`name = ${'n'}`
  t.same(statement(sql`SELECT * FROM t WHERE ${filter} LIMIT ${limit}`), { text: 'SELECT * FROM t WHERE name = $1 LIMIT $2', params: ['n', 10] })
  t.same(statement(sql`SELECT count(*) FROM (SELECT 1 FROM t WHERE ${filter} LIMIT ${bound}) AS c`),
    { text: 'SELECT count(*) FROM (SELECT 1 FROM t WHERE name = $1 LIMIT $2) AS c', params: ['n', 1010] })
})

t.test('joined pieces, and text as it is', async (t) => {
  t.same(statement(join([sql`a = ${1}`, raw('b'), sql`c = ${3}`], ' AND ')), { text: 'a = $1 AND b AND c = $2', params: [1, 3] })
  t.same(statement(join([], ' AND ')), { text: '', params: [] })
  t.same(statement(sql`${raw('')}`), { text: '', params: [] })
})

t.test('LIKE patterns take the value literally', async (t) => {
  t.equal(likePattern('core', true, true), '%core%')
  t.equal(likePattern('50%_off', true, true), '%50\\%\\_off%')
  t.equal(likePattern('a\\b', false, true), 'a\\\\b%')
})
