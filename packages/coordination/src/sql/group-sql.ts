import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'

/**
 * Records a new group: its size, its callbacks (encoded messages) and its TTL.
 *
 * Parameters: id, total, onCompletion (JSON or null), onFailure (JSON or null), TTL in ms.
 */
export function insertGroupSql(ns: Namespace): string {
  return `insert into ${table(ns, 'coordination_groups')} (id, total, on_completion, on_failure, expires_at)
values ($1::uuid, $2::int, $3::text::jsonb, $4::text::jsonb, now() + $5::float8 * interval '1 millisecond')`
}

/**
 * Runs in the settle transaction that acknowledges group members: records
 * each member once (a redelivered member finds its row and adds nothing),
 * adds the new ones to their group's count, and returns the groups this
 * statement brought to their total, with their completion callback. The
 * groups are locked in id order first, so two batches touching the same
 * groups wait for each other instead of deadlocking; the count update then
 * works on the latest row, so two batches finishing the last members of a
 * group concurrently make exactly one of them the one that completes it.
 *
 * Parameters: group ids, message ids (pairwise).
 */
export function recordMembersSql(ns: Namespace): string {
  const groups = table(ns, 'coordination_groups')
  return `with m as (
  select * from unnest($1::uuid[], $2::uuid[]) as m(group_id, message_id)
),
locked as (
  select id from ${groups} where id in (select group_id from m) order by id for update
),
added as (
  insert into ${table(ns, 'coordination_group_members')} (group_id, message_id)
  select m.group_id, m.message_id from m join locked on locked.id = m.group_id
  on conflict do nothing
  returning group_id
),
counts as (select group_id, count(*)::int as n from added group by group_id)
update ${groups} g
   set done = g.done + counts.n,
       completed_at = case when g.done + counts.n >= g.total then coalesce(g.completed_at, now()) end
  from counts
 where g.id = counts.group_id
returning g.id::text as id, (g.done >= g.total and g.done - counts.n < g.total) as completed,
          g.on_completion::text as on_completion`
}

/**
 * Runs in the settle transaction of members rejected for good (or
 * cancelled): marks their groups failed, once, and returns the groups that
 * were not failed or complete before, with their failure callback.
 *
 * Parameters: group ids.
 */
export function failGroupsSql(ns: Namespace): string {
  const groups = table(ns, 'coordination_groups')
  return `update ${groups} set failed_at = now()
 where id in (
   select id from ${groups} where id = any($1::uuid[]) order by id for update
 )
   and failed_at is null and completed_at is null
returning id::text as id, on_failure::text as on_failure`
}

/**
 * A group's progress.
 *
 * Parameters: id.
 */
export function readGroupSql(ns: Namespace): string {
  return `select total, done, completed_at, failed_at from ${table(ns, 'coordination_groups')} where id = $1::uuid`
}
