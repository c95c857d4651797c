import type { Namespace } from '@iddqueue/schema'

/** Epoch ms of a timestamptz, as an exact numeric (microseconds in its fraction). */
const epochMs = (expr: string) => `(extract(epoch from ${expr}) * 1000)`
/**
 * A schedule's time, written from whole ms: read back as whole ms, rounded
 * (a time stored before writes were exact is a hair off a whole ms, and
 * truncating toward zero made one before 1970 read back 1 ms late).
 */
const ms = (column: string) => `round(${epochMs(column)})::float8`
/** The clock, or a row's creation: the ms it falls in. */
const clockMs = (expr: string) => `floor(${epochMs(expr)})::float8`
const DAY_MS = 86_400_000
/**
 * Epoch ms as a timestamptz, exactly: whole days, plus the ms into the day,
 * added to 1970-01-01 in UTC. A plain `ms * interval '1 millisecond'` is
 * multiplied in float8 microseconds and lands off the ms beyond about 2,280
 * years from 1970; these two products stay exact.
 */
const ts = (param: string) => {
  const days = `floor(${param}::float8 / ${DAY_MS})`
  return `((timestamp 'epoch' + ${days} * interval '1 day' + (${param}::float8 - ${days} * ${DAY_MS}) * interval '1 millisecond') at time zone 'UTC')`
}

/** The columns of a schedule row, times as epoch ms. */
const COLUMNS = `name, actor, queue, args, priority, every_ms::float8 as every_ms, cron, timezone,
  ${ms('start_at')} as start_at_ms, ${ms('end_at')} as end_at_ms, ${ms('anchor_at')} as anchor_at_ms,
  catch_up, overlap, enabled, ${ms('next_run_at')} as next_run_ms, ${ms('last_run_at')} as last_run_ms,
  last_message_id::text as last_message_id, source, definition_hash,
  ${clockMs('created_at')} as created_ms, ${clockMs('updated_at')} as updated_ms`

/** @internal A schedule row as the statements below return it. */
export interface ScheduleRow {
  name: string
  actor: string
  queue: string
  args: unknown[]
  priority: number
  every_ms: number | null
  cron: string | null
  timezone: string | null
  start_at_ms: number | null
  end_at_ms: number | null
  anchor_at_ms: number
  catch_up: 'latest' | { max: number; withinMs?: number }
  overlap: 'allow' | 'skip'
  enabled: boolean
  next_run_ms: number | null
  last_run_ms: number | null
  last_message_id: string | null
  source: 'code' | 'api'
  definition_hash: string
  created_ms: number
  updated_ms: number
}

/** @internal The scheduler's statements for one namespace (values are always parameters). */
export interface SchedulerStatements {
  readonly channel: string
  /** PostgreSQL's clock, as epoch ms. */
  readonly now: string
  /** $1 name. */
  readonly get: string
  /** $1 names: the rows, locked, in name order (so two define() calls lock in one order). */
  readonly lockMany: string
  readonly list: string
  /**
   * $1..$15 the row, $16 source, $17 channel. Inserts, or rewrites a row whose
   * definition changed; returns the name when it wrote, nothing when the
   * stored definition was already this one.
   */
  readonly upsert: string
  /** As upsert, but never overwrites: returns nothing when the name exists. */
  readonly insert: string
  /** $1 name, $2 enabled, $3 next run ms, $4 channel. */
  readonly setEnabled: string
  /** $1 name, $2 channel. */
  readonly delete: string
  /** $1 names kept, $2 channel: deletes schedules defined in code that are not listed. */
  readonly prune: string
  /**
   * $1 names to leave out (they failed in this tick). One due schedule,
   * locked, skipping rows another scheduler holds, with the clock.
   */
  readonly takeDue: string
  /** $1 message id: true while it is queued or running. */
  readonly isUnfinished: string
  /** $1 name, $2 next run ms (null: ended), $3 last run ms, $4 last message id. */
  readonly advance: string
  /** Ms until the earliest next run of an enabled schedule (may be negative), or null. */
  readonly untilNext: string
}

/** @internal Builds the statements for a namespace. */
export function schedulerStatements(
  ns: Namespace,
  messagesTable = ns.table('messages'),
): SchedulerStatements {
  const t = ns.table('schedules')
  const values = `($1, $2, $3, $4::text::jsonb, $5, $6::bigint, $7, $8, ${ts('$9')}, ${ts('$10')}, ${ts('$11')},
      $12::text::jsonb, $13, $14, ${ts('$15')}, $16, $17)`
  const insertColumns = `(name, actor, queue, args, priority, every_ms, cron, timezone, start_at, end_at,
      anchor_at, catch_up, overlap, enabled, next_run_at, source, definition_hash)`
  // One notification per statement that wrote: PostgreSQL folds identical
  // notifications of a transaction into one, and none is sent on rollback.
  const notify = (param: string) => `select name, pg_notify(${param}, 'changed') from written`
  return {
    channel: ns.channel('schedule'),
    // Whole milliseconds: intended times and message ids are made from them.
    now: `select ${clockMs('clock_timestamp()')} as now_ms`,
    get: `select ${COLUMNS} from ${t} where name = $1`,
    lockMany: `select ${COLUMNS} from ${t} where name = any($1::text[]) order by name for update`,
    list: `select ${COLUMNS} from ${t} order by name`,
    upsert: `with written as (
  insert into ${t} as s ${insertColumns} values ${values}
  on conflict (name) do update set actor = excluded.actor, queue = excluded.queue, args = excluded.args,
    priority = excluded.priority, every_ms = excluded.every_ms, cron = excluded.cron,
    timezone = excluded.timezone, start_at = excluded.start_at, end_at = excluded.end_at,
    anchor_at = excluded.anchor_at, catch_up = excluded.catch_up, overlap = excluded.overlap,
    enabled = excluded.enabled, next_run_at = excluded.next_run_at, source = excluded.source,
    definition_hash = excluded.definition_hash, updated_at = now()
  where s.definition_hash <> excluded.definition_hash or s.source <> excluded.source
  returning name
)
${notify('$18')}`,
    insert: `with written as (
  insert into ${t} ${insertColumns} values ${values}
  on conflict (name) do nothing
  returning name
)
${notify('$18')}`,
    setEnabled: `with written as (
  update ${t} set enabled = $2, next_run_at = ${ts('$3')}, updated_at = now()
  where name = $1 returning name
)
${notify('$4')}`,
    delete: `with written as (delete from ${t} where name = $1 returning name)
${notify('$2')}`,
    prune: `with written as (
  delete from ${t} where source = 'code' and not (name = any($1::text[])) returning name
)
${notify('$2')}`,
    takeDue: `select ${COLUMNS}, ${clockMs('clock_timestamp()')} as now_ms from ${t}
where enabled and next_run_at <= clock_timestamp() and not (name = any($1::text[]))
order by next_run_at limit 1 for update skip locked`,
    isUnfinished: `select exists (select 1 from ${messagesTable}
  where id = $1::uuid and state in ('queued', 'consumed')) as unfinished`,
    advance: `update ${t} set next_run_at = ${ts('$2')}, last_run_at = coalesce(${ts('$3')}, last_run_at),
  last_message_id = coalesce($4::uuid, last_message_id) where name = $1`,
    untilNext: `select (${epochMs('min(next_run_at)')} - ${epochMs('clock_timestamp()')})::float8 as wait_ms
from ${t} where enabled and next_run_at is not null`,
  }
}
