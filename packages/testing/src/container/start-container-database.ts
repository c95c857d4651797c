import type { TestDatabase } from '../test-database.js'
import { TestDatabaseError } from '../test-database-error.js'

/**
 * Starts PostgreSQL from `image` with testcontainers; `stop()` stops and
 * removes the container. Should this process die first, testcontainers'
 * reaper container (Ryuk) removes it.
 *
 * Call {@link containerRuntimeAnswers} first: this waits as long as the
 * runtime takes, including for the image pull.
 *
 * @internal
 */
export async function startContainerDatabase(image: string): Promise<TestDatabase> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
  let container: Awaited<ReturnType<InstanceType<typeof PostgreSqlContainer>['start']>>
  try {
    container = await new PostgreSqlContainer(image).start()
  } catch (error) {
    throw new TestDatabaseError(
      `could not start a PostgreSQL container from image ${JSON.stringify(image)}: ${(error as Error).message}`,
      { cause: error },
    )
  }
  let stopping: Promise<void> | undefined
  return {
    url: container.getConnectionUri(),
    mode: 'container',
    stop: () => {
      stopping ??= container.stop().then(() => {})
      return stopping
    },
  }
}
