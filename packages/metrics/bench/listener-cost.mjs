import { Registry } from 'prom-client'
import { workerMetrics } from '../dist/index.js'

const listeners = {}
const plugin = workerMetrics({ registry: new Registry() })
plugin.setup({
  on: (e, l) => {
    listeners[e] = l
    return () => {}
  },
})
const message = { queue: 'drain', actor: 'noop' }
const outcome = { kind: 'success', result: undefined }
const N = 1_000_000
for (let round = 0; round < 3; round++) {
  const t = performance.now()
  for (let i = 0; i < N; i++) {
    listeners['message:started']({ message, attempt: 1, workerId: 'w', queueWaitMs: 3 })
    listeners['message:finished']({ message, outcome, attempt: 1, durationMs: 0.02, workerId: 'w' })
  }
  console.log(`${(((performance.now() - t) * 1000) / N).toFixed(3)} µs per message`)
}
