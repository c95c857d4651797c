import { createBroker } from '@iddqueue/core'
import { results } from '@iddqueue/results'

/**
 * The broker and actors, shared by the HTTP server (which sends and reads
 * results) and the worker process (which runs them).
 */
export function createJobs(url: string | undefined) {
  if (!url)
    throw new Error('DATABASE_URL is not set: export DATABASE_URL=postgres://user@host:5432/db')
  const broker = createBroker({ url, plugins: [results()] })

  const wordCount = broker.actor(
    'word_count',
    (text: string) => {
      const words = text.split(/\s+/).filter(Boolean)
      return {
        words: words.length,
        longest: words.reduce((a, b) => (b.length > a.length ? b : a), ''),
      }
    },
    { queue: 'text', storeResults: true, resultTtlMs: 3_600_000 },
  )

  return { broker, wordCount }
}
