/** @internal A claimed message as the claim statement returns it. */
export interface Delivery {
  readonly id: string
  readonly queue: string
  readonly actor: string
  readonly args: unknown[]
  readonly options: Record<string, unknown>
  readonly priority: number
  readonly retries: number
  /** The eta, in epoch ms. */
  readonly eta_ms: number
  /** Milliseconds since the first enqueue, by PostgreSQL's clock. */
  readonly age_ms: number
}

/** @internal Priority, then eta: the order handlers start in. */
export function compareDeliveries(a: Delivery, b: Delivery): number {
  return a.priority - b.priority || a.eta_ms - b.eta_ms
}
