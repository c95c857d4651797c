// `@iddqueue/schema/kysely`: the parts that load Kysely at runtime, kept out
// of the main entry so that workers do not pay for Kysely unless they use it.
export { NamespacePlugin } from './kysely/namespace-plugin.js'
export { createQueryBuilder } from './kysely/query-builder.js'
