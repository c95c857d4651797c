import type { Executor } from '../executor/executor.js'
import { toExecutor } from '../executor/to-executor.js'
import { type Namespace, type NamespaceOptions, toNamespace } from '../namespace/namespace.js'

/**
 * One table of a {@link SchemaDescription}, with namespace names removed.
 *
 * @example
 * const messages: TableDescription | undefined = (await describeSchema(sql)).messages
 * console.log(messages?.indexes)
 */
export interface TableDescription {
  /** `name type [not null] [default ...]`, in column order. */
  readonly columns: readonly string[]
  /** `name: USING ...` per index, sorted. */
  readonly indexes: readonly string[]
  /** `name: definition` per constraint, sorted. */
  readonly constraints: readonly string[]
  /** Storage options such as `fillfactor=90`. */
  readonly options: readonly string[]
}

/**
 * The catalog of a namespace's tables, by logical table name, with the
 * schema and prefix stripped so two namespaces compare equal when their
 * structure is.
 *
 * @example
 * const live: SchemaDescription = await describeSchema(sql, { schema: 'jobs' })
 * console.log(Object.keys(live)) // ['attempts', 'deduplication', 'messages', ...]
 */
export type SchemaDescription = Record<string, TableDescription>

/**
 * Reads the namespace's tables, columns, indexes and constraints from the
 * PostgreSQL catalog.
 *
 * @example
 * const live = await describeSchema(sql, { schema: 'jobs' })
 * console.log(Object.keys(live)) // ['attempts', 'deduplication', 'messages', ...]
 */
export async function describeSchema(
  db: unknown,
  namespaceOptions?: Namespace | NamespaceOptions,
): Promise<SchemaDescription> {
  const executor: Executor = toExecutor(db)
  const ns = toNamespace(namespaceOptions)
  const tables = await executor.query<{ oid: number; name: string; options: string[] | null }>(
    `select c.oid::int as oid, c.relname as name, c.reloptions as options
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind in ('r', 'p') and starts_with(c.relname, $2)
      order by c.relname`,
    [ns.schema, ns.prefix],
  )
  const strip = (name: string) => name.slice(ns.prefix.length)
  const description: SchemaDescription = {}
  for (const table of tables) {
    const columns = await executor.query<{ line: string }>(
      `select a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
              || case when a.attnotnull then ' not null' else '' end
              || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') as line
         from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attrelid = $1 and a.attnum > 0 and not a.attisdropped
        order by a.attnum`,
      [table.oid],
    )
    const indexes = await executor.query<{ name: string; def: string }>(
      `select c.relname as name, substring(pg_get_indexdef(i.indexrelid) from ' USING .*') as def
         from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = $1 order by c.relname`,
      [table.oid],
    )
    // PostgreSQL 18 also records each NOT NULL as a pg_constraint row (contype 'n');
    // the column line already says `not null`, so those rows would only repeat it
    // (under a generated name) and make the description differ between versions.
    const constraints = await executor.query<{ name: string; def: string }>(
      `select conname as name, pg_get_constraintdef(oid) as def
         from pg_constraint where conrelid = $1 and contype <> 'n' order by conname`,
      [table.oid],
    )
    description[strip(table.name)] = {
      columns: columns.map((column) => column.line),
      indexes: indexes.map((index) => `${strip(index.name)}:${index.def}`).sort(),
      constraints: constraints.map((c) => `${strip(c.name)}: ${c.def}`).sort(),
      options: [...(table.options ?? [])].sort(),
    }
  }
  return description
}

/**
 * @internal Lines that differ between two descriptions, as `+ table: line`
 * (only in `actual`) and `- table: line` (only in `expected`).
 */
export function diffDescriptions(expected: SchemaDescription, actual: SchemaDescription): string[] {
  const lines = (description: SchemaDescription) =>
    new Set(
      Object.entries(description).flatMap(([table, t]) => [
        `${table}: table`,
        ...t.columns.map((line) => `${table}: column ${line}`),
        ...t.indexes.map((line) => `${table}: index ${line}`),
        ...t.constraints.map((line) => `${table}: constraint ${line}`),
        ...t.options.map((line) => `${table}: option ${line}`),
      ]),
    )
  const want = lines(expected)
  const have = lines(actual)
  return [
    ...[...want].filter((line) => !have.has(line)).map((line) => `- ${line}`),
    ...[...have].filter((line) => !want.has(line)).map((line) => `+ ${line}`),
  ]
}
