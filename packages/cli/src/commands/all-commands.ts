import type { Command } from '../command.js'
import { cancelCommand } from './cancel-command.js'
import { cancelStatusCommand } from './cancel-status-command.js'
import { checkCommand } from './check-command.js'
import { dashboardCommand } from './dashboard-command.js'
import { deleteCommand } from './delete-command.js'
import { devDbCommand } from './dev-db-command.js'
import { failedListCommand } from './failed-list-command.js'
import { failedRetryCommand } from './failed-retry-command.js'
import { failedShowCommand } from './failed-show-command.js'
import { flushCommand } from './flush-command.js'
import { historyListCommand } from './history-list-command.js'
import { historyPurgeCommand } from './history-purge-command.js'
import { metricsServeCommand } from './metrics-serve-command.js'
import { migrateCommand } from './migrate-command.js'
import { pauseCommand } from './pause-command.js'
import { purgeCommand } from './purge-command.js'
import { queueStatusCommand } from './queue-status-command.js'
import { recoverCommand } from './recover-command.js'
import { resumeCommand } from './resume-command.js'
import { retryCommand } from './retry-command.js'
import { scheduleCreateCommand } from './schedule-create-command.js'
import { scheduleDeleteCommand } from './schedule-delete-command.js'
import { scheduleDisableCommand } from './schedule-disable-command.js'
import { scheduleEnableCommand } from './schedule-enable-command.js'
import { scheduleListCommand } from './schedule-list-command.js'
import { scheduleNextCommand } from './schedule-next-command.js'
import { scheduleShowCommand } from './schedule-show-command.js'
import { scheduleUpdateCommand } from './schedule-update-command.js'
import { schedulerCommand } from './scheduler-command.js'
import { showCommand } from './show-command.js'
import { sqlGrantsCommand } from './sql-grants-command.js'
import { sqlInitCommand } from './sql-init-command.js'
import { sqlUpgradeCommand } from './sql-upgrade-command.js'
import { statsCommand } from './stats-command.js'
import { workerCommand } from './worker-command.js'

/** @internal Every command, in the order the usage lists them, by section. */
export const SECTIONS: readonly {
  readonly title: string
  readonly commands: readonly Command[]
}[] = [
  {
    title: 'schema',
    commands: [sqlInitCommand, sqlUpgradeCommand, sqlGrantsCommand, migrateCommand, checkCommand],
  },
  {
    title: 'inspection',
    commands: [statsCommand, showCommand, failedListCommand, failedShowCommand],
  },
  {
    title: 'control',
    commands: [
      retryCommand,
      failedRetryCommand,
      pauseCommand,
      resumeCommand,
      queueStatusCommand,
      cancelCommand,
      cancelStatusCommand,
    ],
  },
  { title: 'maintenance', commands: [purgeCommand, recoverCommand, flushCommand, deleteCommand] },
  { title: 'attempt history', commands: [historyListCommand, historyPurgeCommand] },
  {
    title: 'schedules',
    commands: [
      scheduleCreateCommand,
      scheduleUpdateCommand,
      scheduleListCommand,
      scheduleShowCommand,
      scheduleNextCommand,
      scheduleEnableCommand,
      scheduleDisableCommand,
      scheduleDeleteCommand,
      schedulerCommand,
    ],
  },
  { title: 'workers', commands: [workerCommand] },
  { title: 'metrics', commands: [metricsServeCommand] },
  { title: 'development', commands: [devDbCommand] },
  { title: 'dashboard', commands: [dashboardCommand] },
]

/** @internal Every command by name (`failed list` for a subcommand). */
export const COMMANDS: ReadonlyMap<string, Command> = new Map(
  SECTIONS.flatMap((section) => section.commands.map((command) => [command.name, command])),
)
