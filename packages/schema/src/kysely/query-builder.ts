import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely'
import type { Namespace } from '../namespace/namespace.js'
import type { IddqueueDatabase } from '../tables/iddqueue-database.js'
import { NamespacePlugin } from './namespace-plugin.js'

/**
 * A Kysely instance that only builds and compiles queries for a namespace.
 *
 * iddqueue runs the compiled text on whatever connection it was given (its
 * own postgres.js pool, the caller's postgres.js or Kysely instance, or a
 * caller's transaction), so typed queries work the same on all of them.
 *
 * @example
 * const qb = createQueryBuilder(namespace())
 * const query = qb.selectFrom('messages').select('id').where('state', '=', 'rejected').compile()
 * const rows = await executor.query(query.sql, query.parameters)
 */
export function createQueryBuilder(ns: Namespace): Kysely<IddqueueDatabase> {
  return new Kysely<IddqueueDatabase>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: [new NamespacePlugin(ns)],
  })
}
