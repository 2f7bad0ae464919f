import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'web/generated/**', 'coverage/**', '.tap/**', '.cache/**', 'data/**', 'test/client/.run-*/**']
  }),
  {
    rules: {
      // A TypeBox schema and its static type share one name (`Member` the value, `Member` the type);
      // TypeScript itself refuses a real redeclaration.
      '@typescript-eslint/no-redeclare': 'off',
      // Fastify's documented way to send from a hook or handler without awaiting is `void reply.send()`.
      'no-void': ['error', { allowAsStatement: true }],
      // The input checks exist to find control characters.
      'no-control-regex': 'off',
      // Loops here wait on flags that a callback or a finished promise sets, which the rule cannot see.
      'no-unmodified-loop-condition': 'off',
      // prom-client metrics register themselves on construction.
      'no-new': 'off'
    }
  }
]
