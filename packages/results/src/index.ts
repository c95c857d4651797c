import type { ResultsActorOptions } from './results-options.js'

export type { EncodedResult } from './encode-result.js'
export {
  ResultCancelled,
  ResultFailure,
  ResultMissing,
  ResultTimeout,
  type StoredFailure,
} from './errors.js'
export { migrationSet, resultsMigrations } from './migrations.js'
export { type PurgeResultsOptions, type ResultsPlugin, results } from './results.js'
export {
  RESULTS_DEFAULTS,
  type ResultsActorOptions,
  type ResultsOptions,
} from './results-options.js'

declare module '@iddqueue/core' {
  /** `storeResults` and `resultTtlMs`, owned by `@iddqueue/results`. */
  interface ActorOptions extends ResultsActorOptions {}
}
