import { IddqueueError } from '@iddqueue/schema'

/**
 * @internal The command line was wrong: a missing or malformed argument, an
 * unknown subcommand. The CLI prints the message and exits 2.
 */
export class UsageError extends IddqueueError {}
