import { readdirSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import postgres from 'postgres'

/** Runs `fn` with a short-lived postgres.js client on `url`. */
export async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    return await fn(sql)
  } finally {
    await sql.end()
  }
}

/** Whether a database of this name exists, from pg_database. */
export function databaseExists(serverUrl: string, name: string): Promise<boolean> {
  return withSql(serverUrl, async (sql) => {
    const rows = await sql`select 1 from pg_database where datname = ${name}`
    return rows.length === 1
  })
}

/** Resolves to the error code of a TCP connection attempt, or 'connected'. */
export function tcpConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve('connected')
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })
}

/** True when `pid` runs and is not a zombie (Linux /proc). */
export function processRuns(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

/** Pids of live processes whose command line mentions `text` (Linux /proc). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (cmdline.includes(text) && processRuns(Number(entry))) pids.push(Number(entry))
    } catch {
      // Exited while we looked.
    }
  }
  return pids
}

/** The postmaster pid from the first line of `<dataDir>/postmaster.pid`. */
export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0])
}
