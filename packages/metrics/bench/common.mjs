// Shared by the metrics package's measurement scripts: a fresh database on
// the shared cluster, created and dropped by the script itself.
import postgres from 'postgres'

const base = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'

export async function withDatabase(label, fn) {
  const name = `bench_metrics_${label}_${process.pid}`
  const admin = postgres(base, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(base)
  url.pathname = `/${name}`
  try {
    return await fn(url.toString())
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`)
    await admin.end()
  }
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
