import t from 'tap'
import fc from 'fast-check'
import { DEFAULT_OTLP_TRACES_URL, parseOtlpHeaders, tracingSettings, urlForSpan, type TracingVariables } from '../../../lib/tracing/settings.js'
import { pathOf } from '../../../lib/http/public-url.js'

const base: TracingVariables = { OTEL_SDK_DISABLED: false, OTEL_SERVICE_NAME: 'netauto-api' }
const settings = (over: Partial<TracingVariables>) => tracingSettings({ ...base, ...over })

t.test('off unless an endpoint or an exporter is named', async (t) => {
  t.same(settings({}), { ok: true, value: undefined })
  t.same(settings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { ok: true, value: undefined })
  t.same(settings({ OTEL_SDK_DISABLED: true, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { ok: true, value: undefined })
})

t.test('the endpoint: the traces one as is, the general one with /v1/traces, else the default', async (t) => {
  t.equal((settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }) as { value: { url: string } }).value.url, 'http://collector:4318/v1/traces')
  t.equal((settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9/t' }) as { value: { url: string } }).value.url, 'http://b:9/t')
  const only = settings({ OTEL_TRACES_EXPORTER: 'OTLP' })
  t.same(only, { ok: true, value: { exporter: 'otlp', url: DEFAULT_OTLP_TRACES_URL, headers: {}, serviceName: 'netauto-api' } })
  t.equal((settings({ OTEL_TRACES_EXPORTER: 'console' }) as { value: { exporter: string } }).value.exporter, 'console')
  t.same(settings({ OTEL_TRACES_EXPORTER: 'zipkin' }), { ok: false, reason: 'OTEL_TRACES_EXPORTER must be otlp, console or none (got "zipkin")' })
})

t.test('headers: key=value lists, the traces list over the general one', async (t) => {
  const value = settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b, X-Team=net,,', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=ops' })
  t.same((value as { value: { headers: unknown } }).value.headers, { 'api-key': 'a b', 'x-team': 'ops' })
  t.same(parseOtlpHeaders('H', 'novalue'), { ok: false, reason: 'H must be a list of key=value pairs separated by commas' })
  t.same(parseOtlpHeaders('H', 'bad key=1'), { ok: false, reason: 'H must be a list of key=value pairs separated by commas' })
  t.same(parseOtlpHeaders('H', 'k=%E0%A4%A'), { ok: false, reason: 'H: the value of k is not valid percent-encoding' })
  t.same(parseOtlpHeaders('H', 'k=a%0D%0Ab'), { ok: false, reason: 'H: the value of k holds a line break or NUL' })
  t.equal(settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: '=x' }).ok, false)
  t.equal(settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_HEADERS: '=x' }).ok, false)
  // Whatever the text: an answer, never a throw, and never a header value with a line break.
  fc.assert(fc.property(fc.string(), (text) => {
    const parsed = parseOtlpHeaders('H', text)
    return !parsed.ok || Object.values(parsed.value).every((v) => !/[\r\n]/.test(v))
  }))
})

t.test('URLs and paths in spans carry no credential', async (t) => {
  t.equal(urlForSpan('https://user:tok@git.example.com/org/repo.git/info/refs?service=git-upload-pack'), 'https://git.example.com/org/repo.git/info/refs')
  t.equal(urlForSpan('not a url'), '')
  t.equal(pathOf('/whoami?token=abc'), '/whoami')
  t.equal(pathOf('/whoami'), '/whoami')
})
