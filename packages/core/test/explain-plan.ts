import type postgres from 'postgres'

/** One node of `EXPLAIN (ANALYZE, FORMAT JSON)`, the fields the plan tests read. */
export interface PlanNode {
  readonly 'Node Type': string
  readonly 'Relation Name'?: string
  readonly 'Index Name'?: string
  readonly 'Actual Rows': number
  readonly 'Actual Loops': number
  readonly Plans?: readonly PlanNode[]
}

/** A node and every node beneath it. */
export function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)]
}

/**
 * Every node of `EXPLAIN ANALYZE` of `statement`, run in a transaction that
 * is rolled back, so what it changes (a claim, a purge) stays as it was.
 */
export async function explainRolledBack(
  sql: postgres.Sql,
  statement: string,
  parameters: readonly unknown[],
): Promise<PlanNode[]> {
  let plan: PlanNode | undefined
  await sql
    .begin(async (tx) => {
      const [row] = await tx.unsafe(
        `explain (analyze, format json) ${statement}`,
        parameters as postgres.ParameterOrJSON<never>[],
      )
      plan = (row!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan
      throw new Error('rollback')
    })
    .catch((error: Error) => {
      if (error.message !== 'rollback') throw error
    })
  return nodes(plan!)
}

/** Rows read from the messages table by every scan of the plan, primary-key probes aside. */
export function rowsRead(plan: readonly PlanNode[]): number {
  return plan
    .filter((n) => n['Relation Name'] === 'messages' && n['Node Type'] !== 'ModifyTable')
    .filter((n) => n['Index Name'] !== 'messages_pkey')
    .reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0)
}
