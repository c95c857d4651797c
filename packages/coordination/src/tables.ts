import { type Namespace, quoteIdentifier } from '@iddqueue/schema'

/** @internal The plugin's tables, by their name without the namespace's prefix. */
export type CoordinationTableName =
  | 'coordination_locks'
  | 'coordination_slots'
  | 'coordination_buckets'
  | 'coordination_hits'
  | 'coordination_barriers'
  | 'coordination_groups'
  | 'coordination_group_members'
  | 'coordination_limits'
  | 'coordination_running'
  | 'coordination_rates'

/** @internal The quoted, schema-qualified name of one of the plugin's tables. */
export function table(ns: Namespace, name: CoordinationTableName): string {
  return `${quoteIdentifier(ns.schema)}.${ns.relation(name)}`
}
