// Reading PostgreSQL plans in tests: EXPLAIN's JSON as a flat list of nodes, and a page that
// carries its count split into the page's own nodes and the count's.
import type pg from 'pg'

export interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  'Relation Name'?: string
  'Parent Relationship'?: string
  'Subplan Name'?: string
  'CTE Name'?: string
  Plans?: PlanNode[]
}

export function nodes (plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)]
}

/** The plan of a statement, as the server would run it with these values. */
export async function explain (client: pg.Client, text: string, params: unknown[]): Promise<PlanNode> {
  const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, params)
  return rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode
}

/**
 * A page's own nodes (with its first pass, the byte bound's CTE `fit`, and the look-ups of it),
 * and those of the other subqueries it runs once (the count it carries).
 */
export function pageAndCarried (plan: PlanNode): { page: PlanNode[], carried: PlanNode[] } {
  const children = plan.Plans ?? []
  const ofPage = (p: PlanNode): boolean => p['Parent Relationship'] !== 'InitPlan' ||
    p['Subplan Name'] === 'CTE fit' || (p['Node Type'] === 'CTE Scan' && p['CTE Name'] === 'fit')
  const below = children.filter(ofPage).map(pageAndCarried)
  return {
    page: [plan, ...below.flatMap((b) => b.page)],
    carried: [...children.filter((p) => !ofPage(p)).flatMap(nodes), ...below.flatMap((b) => b.carried)]
  }
}

export const types = (plan: PlanNode[]): string[] => plan.map((n) => n['Node Type'])
export const indexes = (plan: PlanNode[]): string[] => plan.flatMap((n) => n['Index Name'] === undefined ? [] : [n['Index Name']])
