import type { SpanContext, TraceState } from '@opentelemetry/api'

/**
 * Message option holding the producer's W3C trace context ({@link TraceCarrier}).
 *
 * @example
 * const carrier = message.options[TRACE_OPTION] as TraceCarrier | undefined
 */
export const TRACE_OPTION = 'trace'

/**
 * The W3C trace context stored in a message's options under `trace`.
 *
 * @example
 * const carrier: TraceCarrier = message.options.trace as TraceCarrier
 * console.log(carrier.traceparent) // '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
 */
export interface TraceCarrier {
  readonly traceparent: string
  readonly tracestate?: string
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** @internal The carrier for a span context (W3C Trace Context, version 00). */
export function toCarrier(context: SpanContext): TraceCarrier {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0')
  const traceparent = `00-${context.traceId}-${context.spanId}-${flags}`
  const tracestate = context.traceState?.serialize()
  return tracestate ? { traceparent, tracestate } : { traceparent }
}

/** @internal The remote span context a carrier holds, or undefined when it holds none valid. */
export function fromCarrier(
  value: unknown,
  createTraceState: (raw: string) => TraceState,
): SpanContext | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { traceparent, tracestate } = value as Partial<Record<keyof TraceCarrier, unknown>>
  if (typeof traceparent !== 'string') return undefined
  const match = TRACEPARENT.exec(traceparent)
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined
  return {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
    ...(typeof tracestate === 'string' && tracestate !== ''
      ? { traceState: createTraceState(tracestate) }
      : {}),
  }
}
