import postgres from 'postgres'

/**
 * A single-connection postgres.js client for maintenance statements (CREATE
 * and DROP DATABASE, advisory locks), with notices silenced.
 *
 * @internal
 */
export function connect(url: string): postgres.Sql {
  return postgres(url, {
    max: 1,
    connect_timeout: 10,
    // `DROP DATABASE IF EXISTS` and friends send notices; tests need no noise.
    onnotice: () => {},
  })
}
