import type { Broker } from '@iddqueue/core'
import {
  type Executor,
  InvalidOptionError,
  type Namespace,
  type NamespaceOptions,
  toExecutor,
  toNamespace,
} from '@iddqueue/schema'

/**
 * Where statistics are read from: a broker (its pool and namespace), or a
 * postgres.js instance, a Kysely instance or a transaction of either (with
 * the `namespace` option).
 *
 * @example
 * const fromBroker: StatsSource = broker
 * const fromPool: StatsSource = postgres(process.env.DATABASE_URL!)
 */
export type StatsSource = Broker | object

/** @internal The executor and namespace of a source; a broker's own namespace wins. */
export function resolveSource(
  source: StatsSource,
  namespace: Namespace | NamespaceOptions | undefined,
): { readonly executor: Executor; readonly ns: Namespace } {
  if (isBroker(source)) {
    const ns = source.namespace
    if (namespace !== undefined) {
      const asked = toNamespace(namespace)
      if (asked.schema !== ns.schema || asked.prefix !== ns.prefix) {
        throw new InvalidOptionError(
          `Invalid namespace ${asked.schema}/${asked.prefix}: the broker works in ${ns.schema}/${ns.prefix}`,
        )
      }
    }
    return { executor: source.context.executor, ns }
  }
  return { executor: toExecutor(source, 'statistics source'), ns: toNamespace(namespace) }
}

function isBroker(value: unknown): value is Broker {
  return (
    typeof value === 'object' &&
    value !== null &&
    'context' in value &&
    'namespace' in value &&
    typeof (value as Broker).worker === 'function'
  )
}
