export { type CliIo, EXIT, processIo } from './cli-io.js'
export type { GlobalOptions } from './global-options.js'
export { main } from './main.js'
