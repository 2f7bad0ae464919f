// A pattern the OpenAPI document cannot carry: JSON Schema's portable regular expressions (and
// Python's `re`, Spectral, most generated clients) have no `\p{L}`-style classes. A field that
// needs one keeps a portable `pattern` for the document and this keyword, checked by the service
// only (Ajv, with the `u` flag); the document leaves it out and says the rule in words.
import type { FuncKeywordDefinition } from 'ajv'

export const UNICODE_PATTERN_KEYWORD = 'x-unicode-pattern'

const compiled = new Map<string, RegExp>()

/** The keyword definition, for the validator's `keywords` option. */
export const unicodePatternKeyword: FuncKeywordDefinition = {
  keyword: UNICODE_PATTERN_KEYWORD,
  type: 'string',
  schemaType: 'string',
  errors: true,
  validate: function validate (pattern: string, data: string): boolean {
    let regex = compiled.get(pattern)
    if (regex === undefined) {
      regex = new RegExp(pattern, 'u')
      compiled.set(pattern, regex)
    }
    if (regex.test(data)) return true
    // Ajv reads a function keyword's errors from the function itself and fills in the paths.
    ;(validate as { errors?: unknown }).errors = [{ keyword: UNICODE_PATTERN_KEYWORD, message: 'must follow the naming rule in the field\'s description', params: {} }]
    return false
  }
}
