/**
 * @internal Internals for iddqueue's own tests, beside the public surface of
 * `index.ts`. Not an entry of the published package: its types are stripped
 * of everything marked `@internal`, and nothing here is promised to users.
 */
export type { Broker as BrokerClass } from './broker/broker.js'
export { Message } from './message/message.js'
export type { BrokerContext } from './runtime/broker-context.js'
export type { Listener } from './runtime/listener.js'
export type { Statements } from './sql/statements.js'
