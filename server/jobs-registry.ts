/**
 * Every job kind the service runs, listed once (each module declares its
 * kind's payload type next to its handler, in `JobPayloads`). Boot stops when
 * a listed kind has no handler, and a test checks the list against the
 * handlers the composition root registers, so neither can drift.
 */
import type { JobName, JobQueue } from './jobs';

export const JOB_NAMES = [
  'files.transfer',
  'archive.extract',
  'archive.add',
  'av.scan',
  'thumb',
  'text.extract',
  'storage.sync',
  'webhook.deliver',
  'replica.copy',
  'replica_retry',
  'replica.audit',
  'replica.drill',
  'plugin-action',
  'backup.run',
  'app_store.install',
  'tenant.purge',
] as const satisfies readonly JobName[];

/** Throws (boot fails) naming every job kind that has no handler on `queue`. */
export function assertEveryJobHandled(queue: JobQueue): void {
  queue.assertHandlers(JOB_NAMES);
}
