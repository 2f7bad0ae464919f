// Whether traces are exported, and where: the standard OTEL_* variables, read once at start.

/** The OTEL_* settings the service reads (plugins/core/config.ts). */
export interface TracingVariables {
  OTEL_SDK_DISABLED: boolean
  OTEL_TRACES_EXPORTER?: string
  OTEL_EXPORTER_OTLP_ENDPOINT?: string
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string
  OTEL_EXPORTER_OTLP_HEADERS?: string
  OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string
  OTEL_SERVICE_NAME: string
}

/** Traces are on: where they go. */
export interface TracingSettings {
  exporter: 'otlp' | 'console'
  /** OTLP over HTTP (protobuf): the traces endpoint itself (…/v1/traces). */
  url: string
  /** Sent with every export (a collector's API key...). */
  headers: Record<string, string>
  serviceName: string
}

/** The OTLP default when only OTEL_TRACES_EXPORTER=otlp is set (the specification's). */
export const DEFAULT_OTLP_TRACES_URL = 'http://localhost:4318/v1/traces'

export type Parsed<T> = { ok: true, value: T } | { ok: false, reason: string }

/**
 * W3C Baggage-like `key=value,key2=value2` (the OTLP exporter's header list); values are
 * percent-decoded. Empty entries are ignored.
 */
export function parseOtlpHeaders (name: string, text: string | undefined): Parsed<Record<string, string>> {
  const headers: Record<string, string> = {}
  if (text === undefined) return { ok: true, value: headers }
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue
    const at = entry.indexOf('=')
    const key = entry.slice(0, at).trim()
    // An HTTP header name (RFC 9110 token).
    if (at < 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) {
      return { ok: false, reason: `${name} must be a list of key=value pairs separated by commas` }
    }
    let value: string
    try {
      value = decodeURIComponent(entry.slice(at + 1).trim())
    } catch {
      return { ok: false, reason: `${name}: the value of ${key} is not valid percent-encoding` }
    }
    if (/[\r\n\0]/.test(value)) return { ok: false, reason: `${name}: the value of ${key} holds a line break or NUL` }
    headers[key.toLowerCase()] = value
  }
  return { ok: true, value: headers }
}

/**
 * On when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set or OTEL_TRACES_EXPORTER names an exporter;
 * off when neither is, when OTEL_TRACES_EXPORTER is `none` or when OTEL_SDK_DISABLED is true.
 */
export function tracingSettings (v: TracingVariables): Parsed<TracingSettings | undefined> {
  if (v.OTEL_SDK_DISABLED) return { ok: true, value: undefined }
  const endpoint = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (v.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : `${v.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`)
  const exporter = v.OTEL_TRACES_EXPORTER?.trim().toLowerCase() ?? (endpoint === undefined ? 'none' : 'otlp')
  if (exporter === 'none') return { ok: true, value: undefined }
  if (exporter !== 'otlp' && exporter !== 'console') {
    return { ok: false, reason: `OTEL_TRACES_EXPORTER must be otlp, console or none (got "${v.OTEL_TRACES_EXPORTER ?? ''}")` }
  }
  // The signal's own list wins over the general one, key by key.
  const general = parseOtlpHeaders('OTEL_EXPORTER_OTLP_HEADERS', v.OTEL_EXPORTER_OTLP_HEADERS)
  if (!general.ok) return general
  const own = parseOtlpHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', v.OTEL_EXPORTER_OTLP_TRACES_HEADERS)
  if (!own.ok) return own
  return {
    ok: true,
    value: { exporter, url: endpoint ?? DEFAULT_OTLP_TRACES_URL, headers: { ...general.value, ...own.value }, serviceName: v.OTEL_SERVICE_NAME }
  }
}

/** A URL for a span attribute: no user information, no query (either may carry a credential). */
export function urlForSpan (url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return ''
  }
}
