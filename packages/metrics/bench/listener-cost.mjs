// CPU cost per message of the workerMetrics plugin, without a database:
// what a worker does for each message once the plugin listens (build the
// `message:started` and `message:finished` payloads, emit them through the
// broker's event bus, tally), against the same loop with nobody listening.
//
//   node packages/metrics/bench/listener-cost.mjs
import { createBroker, Message } from '@iddqueue/core'
import { Registry } from 'prom-client'
import { workerMetrics } from '../dist/index.js'

const N = 2_000_000
const message = new Message(
  undefined,
  '0193c0de-6f2a-7b3c-9d1e-0a1b2c3d4e5f',
  'noop',
  'drain',
  [],
  0,
  {},
)
const outcome = { kind: 'success', result: undefined }
const etaMs = Date.now()

function loop(events) {
  const started = performance.now()
  for (let i = 0; i < N; i++) {
    // As worker.ts does: payloads only when someone listens.
    const startedAt = performance.now() // the worker reads it for every run anyway
    if (events.has('message:started')) {
      events.emit('message:started', {
        message,
        attempt: 1,
        workerId: 'w',
        queueWaitMs: Math.max(0, performance.timeOrigin + startedAt - etaMs),
      })
    }
    if (events.has('message:finished')) {
      events.emit('message:finished', {
        message,
        outcome,
        attempt: 1,
        durationMs: 0.02,
        workerId: 'w',
      })
    }
  }
  return ((performance.now() - started) * 1000) / N
}

// Never connects: the event bus works without a database.
const idle = createBroker({ url: 'postgres://127.0.0.1:1/none' })
const listened = createBroker({ url: 'postgres://127.0.0.1:1/none' })
workerMetrics({ registry: new Registry() }).setup({
  on: (event, listener) => listened.on(event, listener),
})
const without = []
const withMetrics = []
for (let round = 0; round < 5; round++) {
  without.push(loop(idle.context.events))
  withMetrics.push(loop(listened.context.events))
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const added = median(withMetrics) - median(without)
console.log(
  JSON.stringify({
    messages: N,
    without_us: Number(median(without).toFixed(3)),
    with_us: Number(median(withMetrics).toFixed(3)),
    added_us_per_message: Number(added.toFixed(3)),
  }),
)
await idle.close()
await listened.close()
