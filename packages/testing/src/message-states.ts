import type postgres from 'postgres'

/**
 * Options of {@link messageStates}.
 *
 * @example
 * await messageStates(sql, { queue: 'emails', schema: 'jobs', prefix: 'app_' })
 */
export interface MessageStatesOptions {
  /** Only this queue. Default: every queue. */
  readonly queue?: string
  /** The namespace's schema. Default `'iddqueue'`. */
  readonly schema?: string
  /** The namespace's table prefix. Default `''`. */
  readonly prefix?: string
}

/**
 * The messages table's rows by state, as `{ state: count }`: what a test
 * asserts after a worker ran. States with no row are absent.
 *
 * @example
 * expect(await messageStates(sql, { queue })).toEqual({ done: 3, rejected: 1 })
 */
export async function messageStates(
  sql: postgres.Sql,
  options: MessageStatesOptions = {},
): Promise<Record<string, number>> {
  const relation = `"${(options.schema ?? 'iddqueue').replaceAll('"', '""')}"."${`${options.prefix ?? ''}messages`.replaceAll('"', '""')}"`
  const rows = options.queue
    ? await sql.unsafe(
        `select state, count(*)::int as n from ${relation} where queue = $1 group by state`,
        [options.queue],
      )
    : await sql.unsafe(`select state, count(*)::int as n from ${relation} group by state`)
  return Object.fromEntries(rows.map((row) => [row.state as string, row.n as number]))
}

/**
 * A queue name no other test uses: `label`, an underscore and eight random hex digits.
 *
 * @example
 * const queue = uniqueQueue('emails') // 'emails_3f9a01bc'
 */
export function uniqueQueue(label = 'q'): string {
  return `${label}_${crypto.randomUUID().slice(0, 8)}`
}
