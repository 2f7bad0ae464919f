import t from 'tap'
import client from 'prom-client'
import { DEFAULT_BUCKETS, LabelledHistogram } from '../../../lib/http/histogram.js'

// Values on, between and beyond the bounds, for two series.
const observations: Array<[{ method: string, route: string, status_code: number }, number]> = [
  [{ method: 'GET', route: '/users', status_code: 200 }, 0.005],
  [{ method: 'GET', route: '/users', status_code: 200 }, 0.0051],
  [{ method: 'GET', route: '/users', status_code: 200 }, 0],
  [{ method: 'GET', route: '/users', status_code: 200 }, 12],
  [{ method: 'POST', route: '/users', status_code: 409 }, 0.3],
  [{ method: 'GET', route: '/users', status_code: 200 }, 2.5]
]

t.test('scrapes exactly as a prom-client Histogram fed the same values', async (t) => {
  const reference = new client.Registry()
  const expected = new client.Histogram({ name: 'duration_seconds', help: 'Duration', labelNames: ['method', 'route', 'status_code'], registers: [reference] })
  const registry = new client.Registry()
  const histogram = new LabelledHistogram({ name: 'duration_seconds', help: 'Duration' })
  registry.registerMetric(histogram as unknown as client.Metric)
  for (const [labels, value] of observations) {
    expected.observe(labels, value)
    histogram.series(labels).observe(value)
  }
  t.equal(await registry.metrics(), await reference.metrics())
  t.match(await registry.metrics(), /duration_seconds_bucket\{le="\+Inf",method="GET",route="\/users",status_code="200"\} 5/)
})

t.test('a series is one object per set of label values, whatever their order', async (t) => {
  const histogram = new LabelledHistogram({ name: 'x', help: 'x' })
  const a = histogram.series({ method: 'GET', status_code: 200 })
  t.equal(histogram.series({ status_code: 200, method: 'GET' }), a)
  t.not(histogram.series({ method: 'GET', status_code: 404 }), a)
  a.observe(0.01)
  t.equal(a.count, 1)
  t.equal(a.sum, 0.01)
  t.equal(a.counts[DEFAULT_BUCKETS.indexOf(0.01)], 1, 'a value on a bound counts in that bound')
})

t.test('bounds are used in ascending order whatever order they are given in', async (t) => {
  const histogram = new LabelledHistogram({ name: 'x', help: 'x', buckets: [1, 0.1] })
  const series = histogram.series({})
  series.observe(0.5)
  const { values } = await histogram.get()
  t.same(values.map((v) => [v.labels.le, v.value]).slice(0, 3), [[0.1, 0], [1, 1], ['+Inf', 1]])
})
