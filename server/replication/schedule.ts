/** The replication schedules are cron settings an admin may change at any time (jobs/arm-cron.ts). */
export { armCron } from '../jobs';
