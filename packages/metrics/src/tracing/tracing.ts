import { IddqueueError, type IddqueuePlugin, type Outcome } from '@iddqueue/core'
import { describeValue, InvalidOptionError } from '@iddqueue/schema'
import type { Attributes, Link, Span, Tracer, TracerProvider } from '@opentelemetry/api'
import {
  ATTR_ERROR_TYPE,
  ATTR_MESSAGING_BATCH_MESSAGE_COUNT,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  MESSAGING_OPERATION_TYPE_PROCESS,
  MESSAGING_OPERATION_TYPE_SEND,
  MESSAGING_SYSTEM_IDDQUEUE,
} from './semantic-conventions.js'
import { fromCarrier, TRACE_OPTION, toCarrier } from './trace-carrier.js'

/**
 * How a `process` span relates to the context the message was sent in.
 *
 * - `'link'` (default): a new trace, with a link to the creation context,
 *   as the messaging conventions recommend for work that may run much later
 *   or more than once;
 * - `'parent'`: a child of the creation context, so the whole job sits in
 *   the producer's trace;
 * - `'parent-first-attempt'`: a child on the first attempt, a linked new
 *   trace on retries, so a request's trace does not grow for hours.
 *
 * @example
 * const mode: TraceMode = 'parent-first-attempt'
 */
export type TraceMode = 'link' | 'parent' | 'parent-first-attempt'

/**
 * Options of {@link tracing}.
 *
 * @example
 * const options: TracingOptions = { traceMode: 'parent', tracerProvider: provider }
 */
export interface TracingOptions {
  /** Default `'link'`. */
  readonly traceMode?: TraceMode
  /** Default the global provider (`trace.getTracerProvider()`). */
  readonly tracerProvider?: TracerProvider
}

type Api = typeof import('@opentelemetry/api')

const TRACE_MODES: readonly TraceMode[] = ['link', 'parent', 'parent-first-attempt']
const TRACER_NAME = '@iddqueue/metrics'

/**
 * A plugin that traces sends and runs with OpenTelemetry
 * (`@opentelemetry/api`, an optional peer dependency loaded only when the
 * broker sets this plugin up).
 *
 * Each send (one message or a batch) gets a PRODUCER span `send <queue>`
 * (a batch also carries `messaging.batch.message_count`), and its context is
 * stored in the message's options as `trace: { traceparent, tracestate }`
 * by the same statement that writes the message, so it exists exactly when
 * the message does, in a caller's transaction too. Each run gets a CONSUMER
 * span `process <queue>`, related to that creation context by `traceMode`,
 * with `error.type` when the attempt fails. Retries run the stored message
 * again and pipeline steps and callbacks inherit its `trace` option, so they
 * all keep the original creation context. Attributes follow the OpenTelemetry
 * messaging conventions (`messaging.system` is `iddqueue`).
 *
 * With tracing on, every send runs in a transaction (a savepoint inside a
 * caller's), as with any enqueue middleware: two more round trips.
 *
 * @example
 * import { tracing } from '@iddqueue/metrics'
 *
 * // after the OpenTelemetry SDK is started (NodeSDK or a TracerProvider)
 * const broker = createBroker({ url, plugins: [tracing({ traceMode: 'link' })] })
 */
export function tracing(options: TracingOptions = {}): IddqueuePlugin {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(
      `Invalid tracing() options ${describeValue(options)}: expected an object`,
    )
  const traceMode = options.traceMode ?? 'link'
  if (!TRACE_MODES.includes(traceMode)) {
    throw new InvalidOptionError(
      `Invalid traceMode ${describeValue(options.traceMode)}: expected 'link', 'parent' or 'parent-first-attempt'`,
    )
  }
  let api: Api | undefined
  let tracer: Tracer | undefined

  const endWith = (span: Span, error: unknown): void => {
    const type = errorType(error)
    span.setAttribute(ATTR_ERROR_TYPE, type)
    span.setStatus({ code: api!.SpanStatusCode.ERROR, message: describe(error) })
    span.end()
  }

  return {
    name: '@iddqueue/metrics/tracing',
    inheritedOptions: [TRACE_OPTION],
    async setup() {
      try {
        api = await import('@opentelemetry/api')
      } catch (error) {
        throw new IddqueueError(
          'tracing() needs the @opentelemetry/api package: install it beside @iddqueue/metrics',
          { cause: error },
        )
      }
      tracer = (options.tracerProvider ?? api.trace.getTracerProvider()).getTracer(TRACER_NAME)
      return undefined
    },
    middleware: {
      async enqueue(event, next) {
        if (!api || !tracer) return next()
        const { messages } = event
        const queue = messages[0]!.queue
        const oneQueue = messages.every((m) => m.queue === queue)
        const attributes: Attributes = {
          [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM_IDDQUEUE,
          [ATTR_MESSAGING_OPERATION_NAME]: 'send',
          [ATTR_MESSAGING_OPERATION_TYPE]: MESSAGING_OPERATION_TYPE_SEND,
        }
        if (oneQueue) attributes[ATTR_MESSAGING_DESTINATION_NAME] = queue
        if (messages.length === 1) attributes[ATTR_MESSAGING_MESSAGE_ID] = messages[0]!.id
        else attributes[ATTR_MESSAGING_BATCH_MESSAGE_COUNT] = messages.length
        let active = api.context.active()
        if (!api.trace.getSpan(active)) {
          // A follow-up written by a settle (pipeline step, callback) runs
          // outside any span: its send belongs to the trace it inherited.
          const inherited = messages.find((m) => m.options[TRACE_OPTION] !== undefined)
          const creation =
            inherited && fromCarrier(inherited.options[TRACE_OPTION], api.createTraceState)
          if (creation) active = api.trace.setSpanContext(active, creation)
        }
        const span = tracer.startSpan(
          oneQueue ? `send ${queue}` : 'send',
          { kind: api.SpanKind.PRODUCER, attributes },
          active,
        )
        const spanContext = span.spanContext()
        // No SDK (a non-recording span without a parent): nothing worth storing.
        if (api.isSpanContextValid(spanContext))
          event.addOptions({ [TRACE_OPTION]: toCarrier(spanContext) })
        try {
          await api.context.with(api.trace.setSpan(active, span), next)
        } catch (error) {
          endWith(span, error)
          throw error
        }
        span.end()
      },
      async process(event, next): Promise<Outcome> {
        if (!api || !tracer) return next()
        const { message } = event
        const creation = fromCarrier(message.options[TRACE_OPTION], api.createTraceState)
        const asParent =
          creation !== undefined &&
          (traceMode === 'parent' || (traceMode === 'parent-first-attempt' && event.attempt === 1))
        const parent = asParent
          ? api.trace.setSpanContext(api.ROOT_CONTEXT, creation)
          : api.ROOT_CONTEXT
        const links: Link[] = creation && !asParent ? [{ context: creation }] : []
        const span = tracer.startSpan(
          `process ${message.queue}`,
          {
            kind: api.SpanKind.CONSUMER,
            links,
            attributes: {
              [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM_IDDQUEUE,
              [ATTR_MESSAGING_OPERATION_NAME]: 'process',
              [ATTR_MESSAGING_OPERATION_TYPE]: MESSAGING_OPERATION_TYPE_PROCESS,
              [ATTR_MESSAGING_DESTINATION_NAME]: message.queue,
              [ATTR_MESSAGING_MESSAGE_ID]: message.id,
              'iddqueue.actor': message.actor,
              'iddqueue.attempt': event.attempt,
            },
          },
          parent,
        )
        let outcome: Outcome
        try {
          outcome = await api.context.with(api.trace.setSpan(parent, span), next)
        } catch (error) {
          endWith(span, error)
          throw error
        }
        if (outcome.kind === 'failure') endWith(span, outcome.error)
        else {
          if (outcome.kind === 'cancelled') span.setAttribute(ATTR_ERROR_TYPE, 'cancelled')
          span.end()
        }
        return outcome
      },
    },
  }
}

/** The error's class name, as `error.type` wants; `_OTHER` when it has none. */
function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || '_OTHER'
  return '_OTHER'
}

/** The span's status text. A handler may throw anything: `String()` throws on some values. */
function describe(error: unknown): string {
  if (error instanceof Error) return error.message
  return typeof error === 'string' ? error : describeValue(error)
}
