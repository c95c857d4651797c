import type { Broker } from '@iddqueue/core'
import type { Executor, IddqueueDatabase, Namespace } from '@iddqueue/schema'
import { createQueryBuilder } from '@iddqueue/schema/kysely'
import type { Compilable, Kysely } from 'kysely'

/** @internal What the dashboard's read queries run on: the broker's pool and namespace. */
export class DashboardData {
  readonly ns: Namespace
  readonly executor: Executor
  readonly db: Kysely<IddqueueDatabase>

  constructor(readonly broker: Broker) {
    this.ns = broker.namespace
    this.executor = broker.executor
    this.db = createQueryBuilder(this.ns)
  }

  /** Runs a compiled Kysely query on the broker's pool (or `executor`, such as a transaction). */
  async rows<Row>(query: Compilable<Row>, executor: Executor = this.executor): Promise<Row[]> {
    const compiled = query.compile()
    return executor.query<Row>(compiled.sql, compiled.parameters)
  }

  /** The owners of the namespace's migration ledger: which plugins' tables exist. */
  async installed(): Promise<ReadonlySet<string>> {
    const rows = await this.rows(this.db.selectFrom('migrations').select('owner').distinct())
    return new Set(rows.map((row) => row.owner))
  }
}
