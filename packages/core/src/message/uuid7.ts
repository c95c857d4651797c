import { randomFillSync } from 'node:crypto'

const pool = new Uint8Array(16 * 256)
let offset = pool.length
const hex = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))
let lastMs = 0
let sequence = 0

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random
 * bits, with a 12-bit counter so ids from one process sort in creation order.
 *
 * Time-ordered ids keep the messages primary key append-mostly, which makes
 * inserts cheaper than with random UUIDs, and make cursor pages follow time.
 *
 * @example
 * const id = uuid7() // '0193c0de-6f2a-7b3c-9d1e-...'
 */
export function uuid7(now = Date.now()): string {
  if (offset === pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const bytes = pool.subarray(offset, offset + 16)
  offset += 16
  if (now > lastMs) {
    lastMs = now
    sequence = (bytes[6]! << 8) | bytes[7]!
    sequence &= 0x7ff
  } else {
    sequence = (sequence + 1) & 0xfff
    if (sequence === 0) lastMs += 1
  }
  const ms = lastMs
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff
  bytes[2] = (ms >>> 24) & 0xff
  bytes[3] = (ms >>> 16) & 0xff
  bytes[4] = (ms >>> 8) & 0xff
  bytes[5] = ms & 0xff
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f)
  bytes[7] = sequence & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const h = (i: number) => hex[bytes[i]!]!
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * True for a UUID in its canonical 36-character form.
 *
 * @example
 * isUuid('0193c0de-6f2a-7b3c-9d1e-0a1b2c3d4e5f') // true
 * isUuid('42') // false
 */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}
