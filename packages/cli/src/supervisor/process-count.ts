import { availableParallelism } from 'node:os'
import { UsageError } from '../usage-error.js'

/** @internal `--processes N|auto`: a positive whole number, or the CPU count for `auto`. */
export function processCount(value: string): number {
  if (value === 'auto') return availableParallelism()
  const count = /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new UsageError(
      `invalid --processes ${JSON.stringify(value)}: expected a whole number from 1, or auto`,
    )
  }
  return count
}
