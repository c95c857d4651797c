// A small application built only from the packed tarballs, as a user would
// install them. Type-checked under strict + exactOptionalPropertyTypes, then
// run against a real PostgreSQL.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { type ActorContext, createBroker, InvalidOptionError } from '@iddqueue/core'
import { results } from '@iddqueue/results'
import { generateInitSql } from '@iddqueue/schema'
import { createTestDatabase, startTestDatabase } from '@iddqueue/testing'

const server = await startTestDatabase({ log: (line) => console.error(line) })
const database = await createTestDatabase(server.url, { prefix: 'release_check' })
const broker = createBroker({ url: database.url, plugins: [results()] })
try {
  assert.match(generateInitSql(), /create table/i)
  await broker.migrate()
  const add = broker.actor(
    'add',
    (a: number, b: number, ctx: ActorContext) => a + b + ctx.retries,
    {
      storeResults: true,
    },
  )
  await assert.rejects(add.sendWithOptions({ args: [1, 2], delayMs: -1 }), InvalidOptionError)
  const message = await add.send(1, 2)
  const worker = broker.worker({ concurrency: 2 })
  await worker.start()
  const sum: number = await message.result({ timeoutMs: 30_000 })
  assert.equal(sum, 3)
  await worker.stop()

  const help = execFileSync('node_modules/.bin/iddqueue', ['--help'], { encoding: 'utf8' })
  assert.match(help, /migrate/)
  console.log('release-check app: ok')
} finally {
  await broker.close()
  await database.drop()
  await server.stop()
}
