export { JobQueue, present as presentOp, type OpChange } from './queue';
export { Scheduler } from './scheduler';
export { governorHostStatus } from './governor-host';
export { Governor, MAX_LANES, type GovernorStatus, type PowerOverride, type Release } from './governor';
export { KeepAwake, type KeepAwakeStatus } from './keep-awake';
export { parseCron, nextRun, checkCron } from './cron';
export { armCron } from './arm-cron';
export type { JobContext, JobHandler, JobHandlerOptions, EnqueueOptions, JobName, JobPayloads, Operation, OpStatus } from './types';
export type { OpJournal } from './journal';
