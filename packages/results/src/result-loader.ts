import { BrokerConnectionError, isConnectionError, SchemaNotReadyError } from '@iddqueue/core'
import { describeValue, type Executor, type ResultStatus } from '@iddqueue/schema'

/** @internal A message's stored result as read, or `missing`. */
export type StoredResult =
  | {
      readonly status: ResultStatus
      readonly value: string | null
      readonly failure: string | null
    }
  | { readonly status: 'missing' }

interface Row {
  id: string
  status: ResultStatus | null
  value: string | null
  failure: string | null
  cancelled: boolean
}

/** Ids per read statement. */
const MAX_IDS = 1_000

/**
 * @internal Reads results in batches: every id asked for in the same turn of
 * the event loop goes into one statement, so `group.results()` over a
 * thousand messages reads them in one round trip, not a thousand.
 */
export class ResultLoader {
  #pending: Map<string, ((result: StoredResult | Error) => void)[]> | undefined

  constructor(
    private readonly executor: Executor,
    private readonly sql: string,
  ) {}

  load(id: string): Promise<StoredResult> {
    if (!this.#pending) {
      this.#pending = new Map()
      setImmediate(() => void this.#flush())
    }
    const pending = this.#pending
    return new Promise((resolve, reject) => {
      const callbacks = pending.get(id) ?? []
      callbacks.push((result) => (result instanceof Error ? reject(result) : resolve(result)))
      pending.set(id, callbacks)
    })
  }

  async #flush(): Promise<void> {
    const pending = this.#pending!
    this.#pending = undefined
    const ids = [...pending.keys()]
    for (let start = 0; start < ids.length; start += MAX_IDS) {
      const chunk = ids.slice(start, start + MAX_IDS)
      let results: Map<string, StoredResult> | Error
      try {
        const rows = await this.executor.query<Row>(this.sql, [chunk])
        results = new Map(rows.map((row) => [row.id, stored(row)]))
      } catch (error) {
        results = readError(error)
      }
      for (const id of chunk) {
        const result =
          results instanceof Error ? results : (results.get(id.toLowerCase()) ?? MISSING)
        for (const callback of pending.get(id)!) callback(result)
      }
    }
  }
}

const MISSING: StoredResult = Object.freeze({ status: 'missing' })

function stored(row: Row): StoredResult {
  if (row.status) return { status: row.status, value: row.value, failure: row.failure }
  if (row.cancelled) return { status: 'cancelled', value: null, failure: null }
  return MISSING
}

function readError(error: unknown): Error {
  if (isConnectionError(error)) {
    const reason = error instanceof Error ? error.message : describeValue(error)
    return new BrokerConnectionError(
      `Could not read results: PostgreSQL is unreachable (${reason})`,
      { cause: error },
    )
  }
  if ((error as { code?: unknown } | null)?.code === '42P01') {
    return new SchemaNotReadyError(
      'Could not read results: the results table does not exist; run broker.migrate() with results() in plugins',
      { cause: error },
    )
  }
  return error instanceof Error ? error : new Error(describeValue(error))
}
