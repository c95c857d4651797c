export { Barrier, type BarrierOptions, type BarrierWaitOptions } from './barrier.js'
export type { BucketLimiterOptions } from './bucket-limiter.js'
export { MAX_KEY_LENGTH } from './check.js'
export type { ConcurrentLimiterOptions } from './concurrent-limiter.js'
export {
  type CoordinationOptions,
  type CoordinationPlugin,
  coordination,
  type PurgeCoordinationOptions,
} from './coordination.js'
export {
  BarrierNotFound,
  RateLimitExceeded,
  RateLimited,
  type RateLimitedOptions,
} from './errors.js'
export { CoordinatedGroup, type GroupRunOptions } from './group.js'
export type { Lease } from './lease.js'
export {
  type ConcurrencyOption,
  type CoordinationActorOptions,
  type DeclaredLimit,
  MAX_RATE_LIMIT,
  type RateOption,
} from './limit-options.js'
export type { AcquireOptions, Limiter } from './limiter.js'
export type { LimitInfo, LimitTarget, LimitValues } from './limits.js'
export { coordinationMigrations, migrationSet } from './migrations.js'
export type { WindowLimiterOptions } from './window-limiter.js'

import type { CoordinationActorOptions } from './limit-options.js'

// The plugin's actor options (`concurrency`, `rate`), typed on `broker.actor()` once the package is imported.
declare module '@iddqueue/core' {
  interface ActorOptions extends CoordinationActorOptions {}
}
