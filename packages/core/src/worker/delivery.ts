/** @internal A claimed message as the claim statement returns it. */
export interface Delivery {
  readonly id: string
  readonly queue: string
  readonly actor: string
  readonly args: unknown[]
  readonly options: Record<string, unknown>
  readonly priority: number
  readonly retries: number
  readonly attempts: number
  readonly eta: Date
  readonly enqueued_at: Date
  readonly age_ms: number
}

/** @internal Priority, then eta: the order handlers start in. */
export function compareDeliveries(a: Delivery, b: Delivery): number {
  return a.priority - b.priority || a.eta.getTime() - b.eta.getTime()
}
