export { JobQueue, present as presentOp } from './queue';
export { Scheduler } from './scheduler';
export { parseCron, nextRun } from './cron';
export type { JobContext, JobHandler, JobHandlerOptions, EnqueueOptions, Operation, OpStatus } from './types';
