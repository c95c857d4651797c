import { createHash } from 'node:crypto'

/** @internal SHA-256 of `text` as lowercase hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/**
 * A signed 64-bit advisory-lock key derived from `text`: the first eight
 * bytes of its SHA-256, read as a two's-complement integer.
 *
 * Namespaces derive their lock keys with it (`ns.lockKey(purpose)`), so a
 * lock key of your own made from a distinct text never collides with
 * iddqueue's by accident.
 *
 * @example
 * const key = lockKeyOf('myapp:nightly-export')
 * await sql`select pg_advisory_xact_lock(${key.toString()}::bigint)`
 */
export function lockKeyOf(text: string): bigint {
  return BigInt.asIntN(64, BigInt(`0x${sha256Hex(text).slice(0, 16)}`))
}
