/**
 * @internal OpenTelemetry messaging semantic-convention names, copied here
 * as the OpenTelemetry JS guidance asks for incubating conventions (they
 * may change between versions of `@opentelemetry/semantic-conventions`).
 * Source: semantic conventions 1.37, "Semantic conventions for messaging spans".
 */
export const ATTR_MESSAGING_SYSTEM = 'messaging.system'
/** @internal */
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name'
/** @internal */
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type'
/** @internal */
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name'
/** @internal */
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id'
/** @internal */
export const ATTR_MESSAGING_BATCH_MESSAGE_COUNT = 'messaging.batch.message_count'
/** @internal Stable (not incubating), copied for symmetry. */
export const ATTR_ERROR_TYPE = 'error.type'
/** @internal `messaging.operation.type` values. */
export const MESSAGING_OPERATION_TYPE_SEND = 'send'
/** @internal */
export const MESSAGING_OPERATION_TYPE_PROCESS = 'process'
/** @internal Our `messaging.system` value (not a registered one). */
export const MESSAGING_SYSTEM_IDDQUEUE = 'iddqueue'
