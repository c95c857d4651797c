import { createHash } from 'node:crypto'
import type { Namespace } from '@iddqueue/schema'

/**
 * The reserved prefix of every occurrence's deduplication key; keep your own
 * keys out of it.
 *
 * @example
 * if (key.startsWith(DEDUP_PREFIX)) throw new Error('reserved for schedules')
 */
export const DEDUP_PREFIX = 'iddqueue:schedule:'
/**
 * How long an occurrence's deduplication key stays live: seven days, as the
 * reference. Expiry allows the key again; it does not delete the row.
 *
 * @example
 * console.log(DEDUP_TTL_MS / 86_400_000) // 7
 */
export const DEDUP_TTL_MS = 7 * 24 * 3_600_000

/**
 * The message id of one occurrence: the same (namespace, schedule, intended
 * time) always gives the same UUID, so a publication repeated after a crash
 * or by a second scheduler stores one message. A UUID version 8 whose first
 * 48 bits are the intended time (time-ordered, like core's version 7 ids)
 * and whose other bits come from a SHA-256 of the rest.
 *
 * @example
 * occurrenceId(broker.namespace, 'nightly', Date.UTC(2026, 0, 1, 3)) // '019...-...-8...-...'
 */
export function occurrenceId(ns: Namespace, name: string, intendedMs: number): string {
  const digest = createHash('sha256')
    .update(`${ns.schema}\u0000${ns.prefix}\u0000${name}\u0000${intendedMs}`)
    .digest()
  const ms = Math.max(0, intendedMs)
  digest[0] = Math.floor(ms / 2 ** 40) & 0xff
  digest[1] = Math.floor(ms / 2 ** 32) & 0xff
  digest[2] = (ms >>> 24) & 0xff
  digest[3] = (ms >>> 16) & 0xff
  digest[4] = (ms >>> 8) & 0xff
  digest[5] = ms & 0xff
  digest[6] = 0x80 | (digest[6]! & 0x0f)
  digest[8] = 0x80 | (digest[8]! & 0x3f)
  const hex = digest.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/**
 * The deduplication key of one occurrence: `iddqueue:schedule:<name>:<ISO time>`.
 *
 * @example
 * occurrenceKey('nightly', Date.UTC(2026, 0, 1, 3)) // 'iddqueue:schedule:nightly:2026-01-01T03:00:00.000Z'
 */
export function occurrenceKey(name: string, intendedMs: number): string {
  return `${DEDUP_PREFIX}${name}:${new Date(intendedMs).toISOString()}`
}
