import t from 'tap'
import { Latencies } from '../../bench/latencies.js'

t.test('percentiles by nearest rank, in fractions of a millisecond', async (t) => {
  const latencies = new Latencies()
  t.equal(latencies.percentile(99), 0, 'nothing measured')
  // 1..100 ms in shuffled order, plus a quarter: sorting is numeric, not textual.
  const values = Array.from({ length: 100 }, (_, i) => i + 1.25).reverse()
  for (const v of values) latencies.add(v)
  t.equal(latencies.percentile(50), 50.25)
  t.equal(latencies.percentile(99), 99.25)
  t.equal(latencies.percentile(100), 100.25)
})

t.test('keeps every value past its first allocation', async (t) => {
  const latencies = new Latencies()
  for (let i = 0; i < 200_000; i++) latencies.add(i % 2 === 0 ? 1 : 3)
  t.equal(latencies.percentile(50), 1)
  t.equal(latencies.percentile(51), 3)
})
