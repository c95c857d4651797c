/**
 * Results, pipelines and groups with @iddqueue/results.
 *
 * 1. `message.result()` waits for one handler's return value.
 * 2. A pipeline runs `fetchPrice` -> `applyDiscount` -> `formatPrice`, each
 *    step receiving the previous step's result as its last argument.
 * 3. A group resizes one image to three widths in parallel; `results()`
 *    returns them in submission order, whatever order they finished in.
 * 4. A step that fails for good stops its pipeline: `result()` throws
 *    `ResultFailure` at once instead of waiting for steps that never run.
 *
 * Uses DATABASE_URL when set, otherwise an embedded PostgreSQL, and a fresh
 * database dropped at the end. Exits non-zero if any check fails.
 */
import assert from 'node:assert/strict'
import { createBroker } from '@iddqueue/core'
import { ResultFailure, results } from '@iddqueue/results'
import { createTestDatabase, startTestDatabase } from '@iddqueue/testing'

const server = await startTestDatabase({ log: (line) => console.error(line) })
const database = await createTestDatabase(server.url, { prefix: 'example_results' })
// One broker plays both roles here; in production the producer and the
// worker are usually separate processes that declare the same actors.
const broker = createBroker({ url: database.url, plugins: [results({ storeResults: true })] })

try {
  await broker.migrate()

  const prices: Record<string, number> = { book: 2_000, lamp: 4_500 }
  const fetchPrice = broker.actor(
    'fetch_price',
    (sku: string) => {
      const price = prices[sku]
      if (price === undefined) throw new Error(`unknown sku ${sku}`)
      return price
    },
    { maxRetries: 0 }, // an unknown sku fails for good at once
  )
  const applyDiscount = broker.actor('apply_discount', (percent: number, cents: number) =>
    Math.round(cents * (1 - percent / 100)),
  )
  const formatPrice = broker.actor(
    'format_price',
    (cents: number) => `€${(cents / 100).toFixed(2)}`,
  )
  const resize = broker.actor(
    'resize',
    async (imageId: string, width: number) => {
      // Wider images take longer, so they finish out of submission order.
      await new Promise((resolve) => setTimeout(resolve, width / 20))
      return { imageId, width, url: `https://cdn.example.com/${imageId}-${width}.webp` }
    },
    { maxRetries: 0 },
  )

  const worker = broker.worker({ concurrency: 8 })
  await worker.start()

  // 1. One result.
  const price = await fetchPrice.send('book')
  assert.equal(await price.result({ timeoutMs: 30_000 }), 2_000)
  console.log('fetch_price(book) =', 2_000)

  // 2. A pipeline: each step gets the previous result as its last argument.
  //    `step()` takes every argument but that last one, typed by the handler.
  const pipeline = await broker
    .pipeline([fetchPrice.message('lamp'), applyDiscount.step(10), formatPrice.step()])
    .run()
  const formatted = await pipeline.result({ timeoutMs: 30_000 })
  assert.equal(formatted, '€40.50')
  console.log('pipeline lamp -> 10% off -> format =', formatted)

  // 3. A group: results in submission order.
  const group = await broker
    .group([resize.message('cat', 1200), resize.message('cat', 600), resize.message('cat', 100)])
    .run()
  const sizes = await group.results({ timeoutMs: 30_000 })
  assert.deepEqual(
    sizes.map((size) => size.width),
    [1200, 600, 100],
  )
  console.log('group widths, in submission order =', sizes.map((size) => size.width).join(', '))

  // 4. A failed step stops the pipeline.
  const failing = await broker
    .pipeline([fetchPrice.message('unicorn'), applyDiscount.step(50), formatPrice.step()])
    .run()
  const failure = await failing.result({ timeoutMs: 30_000 }).catch((error: unknown) => error)
  assert.ok(ResultFailure.isInstance(failure), `expected a ResultFailure, got ${String(failure)}`)
  assert.match(failure.failure.message, /unknown sku unicorn/)
  console.log('pipeline with an unknown sku failed:', failure.failure.message)

  await worker.stop()
  console.log(JSON.stringify({ ok: true }))
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await broker.close()
  await database.drop()
  await server.stop()
}
