import type { BrokerContext } from '../runtime/broker-context.js'

/**
 * @internal What travels on the namespace's control channel. Payloads are
 * small and carry only names and ids, never message data.
 */
export type ControlMessage =
  | { readonly kind: 'pause'; readonly queue: string }
  | { readonly kind: 'resume'; readonly queue: string }
  /** A worker stopped starting messages of a paused queue. */
  | { readonly kind: 'paused'; readonly workerId: string; readonly queue: string }
  | { readonly kind: 'cancel'; readonly messageId: string }
  /** The owning worker's answer: the message never started, or it is running. */
  | { readonly kind: 'cancelled'; readonly messageId: string; readonly running: boolean }

const UUID_LENGTH = 36

/** @internal */
export function formatControl(message: ControlMessage): string {
  switch (message.kind) {
    case 'pause':
    case 'resume':
      return `${message.kind}:${message.queue}`
    case 'paused':
      return `paused:${message.workerId}:${message.queue}`
    case 'cancel':
      return `cancel:${message.messageId}`
    case 'cancelled':
      return `cancelled:${message.messageId}:${message.running ? 'running' : 'dropped'}`
  }
}

/** @internal Undefined for anything this version does not understand. */
export function parseControl(payload: string): ControlMessage | undefined {
  const colon = payload.indexOf(':')
  const kind = payload.slice(0, colon)
  const rest = payload.slice(colon + 1)
  switch (kind) {
    case 'pause':
    case 'resume':
      return { kind, queue: rest }
    case 'paused':
      return { kind, workerId: rest.slice(0, UUID_LENGTH), queue: rest.slice(UUID_LENGTH + 1) }
    case 'cancel':
      return { kind, messageId: rest }
    case 'cancelled':
      return {
        kind,
        messageId: rest.slice(0, UUID_LENGTH),
        running: rest.slice(UUID_LENGTH + 1) === 'running',
      }
    default:
      return undefined
  }
}

/** @internal Sends a control message (outside any transaction). */
export async function sendControl(core: BrokerContext, message: ControlMessage): Promise<void> {
  await core.executor.query('select pg_notify($1, $2)', [
    core.statements.controlChannel,
    formatControl(message),
  ])
}

/**
 * @internal Subscribes to control messages until the returned function is
 * called. Does nothing in poll-only mode.
 */
export function onControl(
  core: BrokerContext,
  handler: (message: ControlMessage) => void,
): Promise<() => Promise<void>> {
  return core.listener.subscribe(core.statements.controlChannel, (payload) => {
    const message = parseControl(payload)
    if (message) handler(message)
  })
}
