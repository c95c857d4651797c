import type { Namespace } from '@iddqueue/schema'
import { ASYNC_COMMIT } from './async-commit.js'

/**
 * Clauses a plugin adds to the claim (decisions 0009 and 0012): the
 * coordination plugin's concurrency limits go here, so that they are
 * enforced by the same statement, row by row, without a second round trip.
 * A plugin returns them from `IddqueuePlugin.claimClauses` for the queues a
 * worker consumes.
 *
 * @example
 * const clauses: ClaimClauses = {
 *   with: `blocked as (select 'spam'::text as actor)`,
 *   eligible: `r.actor not in (select actor from blocked)`,
 * }
 */
export interface ClaimClauses {
  /**
   * Common table expressions evaluated once per claim, written as
   * `name as (...)`, comma-separated; the other clauses may read them (for
   * example the keys that are saturated now).
   */
  readonly with?: string
  /**
   * A condition on a ready row `r` (alias `r` of the messages table) that
   * must hold for the row to be claimed: a message whose key is saturated
   * fails it and is stepped over, so the rows behind it are still taken
   * (no head-of-line blocking).
   */
  readonly eligible?: string
  /**
   * An SQL expression (`timestamptz`, may be null) for the earliest time a
   * row that `eligible` steps over may become eligible (a rate window's next
   * free place, a held key's end). An idle worker sleeps until the earliest
   * of that and the next eta, instead of its poll interval.
   */
  readonly wakeAt?: string
  /**
   * Marks `with` and `eligible` as a pre-filter of `pick` (decision 0019):
   * they only step over rows the pick would refuse anyway, to spare it the
   * work. The worker then leaves them out of its claims while they would
   * step over nothing: after a claim that came back full (as many rows as
   * it asked for) and whose `stepped` was false. `stepped` is an SQL
   * expression over the `with` CTEs, true when they may have stepped over a
   * row; each claimed row carries it. `pick`, when given, replaces `pick`
   * in a claim without them (a cheaper one for the rows that may come
   * without the pre-filter; it refuses the others, so that the claim comes
   * back short and the next one has the pre-filter and `pick`).
   */
  readonly prefilter?: { readonly stepped: string; readonly pick?: ClaimClauses['pick'] }
  /**
   * Chooses the claimed rows among candidates. The claim then selects
   * `overfetch` times the batch as candidates (locked, in claim order),
   * in a CTE named `claim_candidates (id, pos, options)` (`pos` numbers them
   * in claim order), and `$2` is that larger number. `ctes` are appended
   * after it (they may modify tables: the claim's own transaction) and `ids`
   * selects the ids to claim; the rows locked but not chosen stay queued.
   */
  readonly pick?: {
    readonly overfetch: number
    readonly ctes: string
    readonly ids: string
    /** True when eligible rows were left for the next claim. */
    readonly more: string
  }
}

/** Priority levels looked at by one claim over several queues; more waits for the next claim. */
const MAX_LEVELS_PER_CLAIM = 32

/** Below every `integer` priority, so the first level is found with a plain `>` probe. */
const BEFORE_ALL = '(-2147483649)::bigint'

/**
 * The claim: marks up to `$2` ready messages of the worker's queues as
 * consumed by worker `$3` and returns them, in one statement.
 *
 * Ready means queued with an eta that has passed, on a queue that is not
 * paused (the pause gate is part of the claim), and eligible under the
 * plugins' clauses. Rows are locked with `FOR UPDATE SKIP LOCKED`, so
 * concurrent claims never wait on each other or take the same message.
 *
 * Its cost depends on the batch and the number of queues, not on the
 * backlog (decision 0009). The ready index is `(queue, priority, eta, id)`
 * over queued rows, so within one queue and one priority the due rows come
 * first and a range probe (`eta <= now()`) stops at the first row not yet
 * due. The claim walks the priority levels in order, one index probe per
 * queue to find each next level, and takes every due row of a level before
 * any row of the next: not-yet-due rows of a smaller priority never sit in
 * front of due ones. With several queues, a level's rows are shared out
 * round-robin between the queues that have some (FIFO within each queue),
 * and the claim stops at the first level it cannot finish; `more` then
 * says that the next claim will find rows at once.
 *
 * Parameters: the queues (`text[]`), the limit, the worker id.
 * Returns the claimed rows and `more` (true when rows were left that this
 * claim could not take without breaking priority order, or that a pick
 * refused), and with a pre-filter `stepped`.
 */
export function claimSql(ns: Namespace, queueCount: number, clauses: ClaimClauses = {}): string {
  const pick = clauses.pick
  // With a pick, the candidates carry their options (the plugin's data).
  const cols = pick ? 'id, options' : 'id'
  const candidates =
    queueCount === 1 ? oneQueue(ns, clauses, cols) : severalQueues(ns, clauses, cols)
  const picked = pick
    ? {
        ctes: `${candidates.ctes},
claim_candidates as materialized (
  select k.id, k.options, row_number() over () as pos from (${candidates.ids}) k
),
${pick.ctes}`,
        ids: pick.ids,
        more: `(${candidates.more} or ${pick.more})`,
      }
    : candidates
  // `id = any(array(...))` makes PostgreSQL probe the primary key for the
  // claimed ids; a join on a CTE let it hash the whole table instead when the
  // table was small (measured: 9 ms of a 12 ms claim of 500 rows out of 50,000).
  // `date_part` returns float8; `extract` returns numeric, and its two numeric
  // products per row were 5% of a plain claim's instructions (decision 0021).
  return `with recursive ${withClauses(ns, clauses)},
${picked.ctes}
update ${ns.table('messages')} m
   set state = 'consumed', worker_id = $3, started_at = now(), updated_at = now(), attempts = m.attempts + 1
 where m.id = any(array(${picked.ids})) and ${ASYNC_COMMIT}
returning m.id, m.queue, m.actor, m.args, m.options, m.priority, m.retries,
          date_part('epoch', m.eta) * 1000 as eta_ms,
          date_part('epoch', now() - m.enqueued_at) * 1000 as age_ms,
          ${picked.more} as more${clauses.prefilter ? `, ${clauses.prefilter.stepped} as stepped` : ''}`
}

/** The queues that are not paused (the pause gate), then the plugins' CTEs. */
function withClauses(ns: Namespace, clauses: ClaimClauses): string {
  const gate = `queues as materialized (
  select q.name from unnest($1::text[]) as q(name)
   where not exists (select 1 from ${ns.table('queue_control')} c where c.queue = q.name and c.paused))`
  return clauses.with ? `${gate},\n${clauses.with}` : gate
}

/** The conditions every claimed row meets, on alias `r`, at priority `level`. */
function dueAt(clauses: ClaimClauses, queue: string, level: string): string {
  const eligible = clauses.eligible ? ` and (${clauses.eligible})` : ''
  return `r.state = 'queued' and r.queue = ${queue} and r.priority = ${level} and r.eta <= now()${eligible}`
}

/** The smallest priority above `after` among the queued rows of the unpaused queues: one probe per queue. */
function nextLevel(ns: Namespace, after: string): string {
  return `(select min(f.priority) from queues u cross join lateral (
      select r.priority from ${ns.table('messages')} r
       where r.state = 'queued' and r.queue = u.name and r.priority > ${after}
       order by r.priority limit 1) f)`
}

/** `id, options` as `r.id, r.options`. */
function prefixed(alias: string, cols: string): string {
  return cols
    .split(', ')
    .map((col) => `${alias}.${col}`)
    .join(', ')
}

interface Picked {
  readonly ctes: string
  readonly ids: string
  readonly more: string
}

/**
 * One queue: the levels in order, and in each the due rows in eta order
 * with the limit applied across levels. The nested loop pulls levels only
 * until the limit is reached.
 */
function oneQueue(ns: Namespace, clauses: ClaimClauses, cols: string): Picked {
  return {
    ctes: `levels(priority) as (
  select ${nextLevel(ns, BEFORE_ALL)}
  union all
  select ${nextLevel(ns, 'l.priority')} from levels l where l.priority is not null
)`,
    ids: `select ${prefixed('c', cols)} from queues u cross join levels l cross join lateral (
    select ${prefixed('r', cols)} from ${ns.table('messages')} r
     where ${dueAt(clauses, 'u.name', 'l.priority')}
     order by r.eta, r.id limit $2 for update skip locked) c
   where l.priority is not null
   limit $2`,
    more: 'false',
  }
}

/**
 * Several queues: a recursive plan, one step per level, that counts (without
 * locking, reading at most each queue's share) how many due rows each queue
 * gives at that level, then locks exactly those in one lateral per (level,
 * queue). A level's `remaining` rows are split between the queues that have
 * due rows there: each gets `remaining / busy` (the first `remaining % busy`
 * of them one more). When some queue filled its share it may hold more rows
 * of that level, so the plan stops there rather than take a lower priority.
 *
 * Every limit computed in the statement (`b.share`, `g.n`) sits over an
 * inner `limit $2`: the planner estimates a computed limit at a tenth of its
 * scan, which grows with the backlog, and past `jit_above_cost` (100,000 by
 * default) every claim was JIT-compiled, about 30 ms against 6 ms of work
 * (decision 0009). The inner limit is a constant in each execution's plan,
 * and rows are still read and locked only as the outer limit pulls them.
 */
function severalQueues(ns: Namespace, clauses: ClaimClauses, cols: string): Picked {
  const messages = ns.table('messages')
  return {
    ctes: `steps(depth, priority, remaining, go, names, counts) as (
  select 0, null::int, $2::int, true, null::text[], null::int[]
  union all
  select s.depth + 1, lv.priority, s.remaining - t.taken, not t.filled, t.names, t.counts
    from steps s
   -- \`offset 0\` keeps the level a computed row: inlined, its probes would run again for every queue.
   cross join lateral (${levelAndDue(ns, clauses, 's.priority')} offset 0) lv
   cross join lateral (
     select coalesce(sum(c.n), 0)::int as taken, coalesce(bool_or(c.n = b.share), false) as filled,
            array_agg(b.name) filter (where c.n > 0) as names, array_agg(c.n) filter (where c.n > 0) as counts
       from (select d.name,
                    s.remaining / cardinality(lv.due)
                      + case when d.i <= s.remaining % cardinality(lv.due) then 1 else 0 end as share
               from unnest(lv.due) with ordinality as d(name, i)) b
      cross join lateral (
        select count(*)::int as n from (
          select 1 from (select 1 from ${messages} r where ${dueAt(clauses, 'b.name', 'lv.priority')}
           order by r.eta, r.id limit $2) y limit b.share) x) c) t
   where s.go and s.remaining > 0 and s.depth < ${MAX_LEVELS_PER_CLAIM} and lv.priority is not null
)`,
    ids: `select ${prefixed('c', cols)} from steps s cross join lateral unnest(s.names, s.counts) as g(name, n)
   cross join lateral (
    select ${prefixed('y', cols)} from (
      select ${prefixed('r', cols)} from ${messages} r
       where ${dueAt(clauses, 'g.name', 's.priority')}
       order by r.eta, r.id limit $2 for update skip locked) y limit g.n) c
   where s.names is not null`,
    more: `(select bool_or(not s.go) or (max(s.depth) >= ${MAX_LEVELS_PER_CLAIM} and bool_and(s.remaining > 0)) from steps s where s.depth > 0)`,
  }
}

/**
 * One row: the smallest priority above `after` among the queued rows of the
 * unpaused queues (`priority`), and the queues with a due row at that level
 * (`due`). One index probe per queue finds the first row of
 * its next level; without an `eligible` clause that row also says whether
 * the queue has a due row there (rows of a level come in eta order), so
 * the backlog's front is walked once per queue, not twice. With one, a row
 * may be due but not eligible: a second probe per queue asks.
 */
function levelAndDue(ns: Namespace, clauses: ClaimClauses, after: string): string {
  const messages = ns.table('messages')
  const firsts = `select u.name, f.priority, f.eta, min(f.priority) over () as level
      from queues u cross join lateral (
        select r.priority, r.eta from ${messages} r
         where r.state = 'queued' and r.queue = u.name and r.priority > coalesce(${after}, ${BEFORE_ALL})
         order by r.priority limit 1) f`
  if (!clauses.eligible) {
    return `select min(p.level) as priority,
           array_agg(p.name) filter (where p.priority = p.level and p.eta <= now()) as due
      from (${firsts}) p`
  }
  return `select min(p.level) as priority,
           array_agg(p.name) filter (where p.priority = p.level and exists (
             select 1 from (select 1 from ${messages} r where ${dueAt(clauses, 'p.name', 'p.level')}
              order by r.eta limit 1) due)) as due
      from (${firsts}) p`
}

/**
 * How long until the next queued message of the worker's unpaused queues
 * becomes ready (negative when one is ready now), or null when none is
 * queued.
 *
 * Cheap in the same shapes as the claim: the earliest eta of a queue is the
 * first row of one of its priority levels, so it reads one row per (queue,
 * level), walking the levels with one index probe each, never the backlog.
 *
 * With `clauses.wakeAt`, the earliest of that and the next eta.
 *
 * Parameters: the queues (`text[]`).
 */
export function nextEtaSql(ns: Namespace, clauses: ClaimClauses = {}): string {
  const messages = ns.table('messages')
  const eligible = clauses.eligible ? ` and (${clauses.eligible})` : ''
  return `with recursive ${withClauses(ns, { ...(clauses.with ? { with: clauses.with } : {}) })},
firsts(queue, priority, eta) as (
  select u.name, f.priority, f.eta from queues u cross join lateral (
    select r.priority, r.eta from ${messages} r where r.state = 'queued' and r.queue = u.name${eligible}
     order by r.priority, r.eta limit 1) f
  union all
  select fs.queue, n.priority, n.eta from firsts fs cross join lateral (
    select r.priority, r.eta from ${messages} r
     where r.state = 'queued' and r.queue = fs.queue and r.priority > fs.priority${eligible}
     order by r.priority, r.eta limit 1) n
)
select (extract(epoch from ${clauses.wakeAt ? `least(min(eta), ${clauses.wakeAt})` : 'min(eta)'} - now()) * 1000)::float8 as wait_ms from firsts`
}
