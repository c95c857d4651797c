/**
 * Whether a container runtime answered, and if not, why.
 *
 * @internal
 */
export type ContainerRuntimeProbe =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string }

/**
 * Asks testcontainers for a container runtime (Docker, Podman, a remote
 * `DOCKER_HOST`) and gives up after `timeoutMs`.
 *
 * Without an engine testcontainers usually fails within milliseconds, but a
 * `DOCKER_HOST` pointing at an unreachable TCP address can hang for much
 * longer, hence the timeout.
 *
 * @internal
 */
export async function containerRuntimeAnswers(timeoutMs: number): Promise<ContainerRuntimeProbe> {
  const { getContainerRuntimeClient } = await import('testcontainers')
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<ContainerRuntimeProbe>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, reason: `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    )
    timer.unref()
  })
  const probe = getContainerRuntimeClient().then(
    (): ContainerRuntimeProbe => ({ ok: true }),
    (error: unknown): ContainerRuntimeProbe => ({
      ok: false,
      reason: error instanceof Error ? error.message : String(error),
    }),
  )
  try {
    return await Promise.race([probe, timeout])
  } finally {
    clearTimeout(timer)
  }
}
