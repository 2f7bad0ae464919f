// How many cases a property test (fast-check) tries. The counts written in the tests keep each
// file within a few seconds; PROPERTY_RUNS multiplies them (CI sets it: .ci/run), e.g.
// `PROPERTY_RUNS=10 npx tap test/lib/git/paths.test.ts` for ten times as many cases.
const factor = Number(process.env.PROPERTY_RUNS ?? '') || 1

/** `n` cases, times PROPERTY_RUNS when it is set. */
export function propertyRuns (n: number): number {
  return Math.max(1, Math.round(n * factor))
}
