import { readFileSync } from 'node:fs'
import postgres from 'postgres'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { queueMetrics, workerMetrics } from '../src/index.js'

const DASHBOARD = new URL('../../../docs/grafana/iddqueue-dashboard.json', import.meta.url)

describe('the Grafana dashboard', () => {
  it('is JSON and queries only metrics this package exports', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      panels: { targets?: { expr: string }[] }[]
    }
    const used = new Set<string>()
    for (const panel of dashboard.panels)
      for (const target of panel.targets ?? [])
        for (const [name] of target.expr.matchAll(/iddqueue_\w+/g)) used.add(name)
    expect(used.size).toBeGreaterThan(10)

    const registry = new Registry()
    // Never queried: registering needs no connection.
    const sql = postgres('postgres://nobody@127.0.0.1:1/none', { max: 1 })
    queueMetrics(sql, { registry })
    workerMetrics({ registry })
    const exported = new Set(
      registry.getMetricsAsArray().map((m) => (m as unknown as { name: string }).name),
    )
    for (const name of used) {
      expect(exported.has(name.replace(/_(bucket|sum|count)$/, '')), name).toBe(true)
    }
    await sql.end()
  })
})
