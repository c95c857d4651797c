/**
 * The dashboard reads what the metrics package reads (it reuses its
 * statistics), so its tests build their databases with the same helpers.
 */
export { drain, insertRows, setupDatabase, uniqueQueue, until } from '../../metrics/test/helpers.js'
