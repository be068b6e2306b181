/**
 * Cron expressions through `croner`: the full syntax (5 fields, or 6 with
 * seconds and 7 with years; lists, ranges, steps, `L`, `W`, `#`, names such as
 * `MON` and nicknames such as `@daily`) and IANA time zones. Day-of-month and
 * day-of-week combine as in classic cron (either may match when both are set).
 */
import { Cron } from 'croner';
import { validation } from '../errors';

export interface CronSpec {
  source: string;
  /** IANA zone the expression is read in; the process's zone when absent. */
  timezone?: string;
  pattern: Cron;
}

/** Parses `expr` (in `timezone` when given). A bad expression or an unknown zone throws an Error naming it. */
export function parseCron(expr: string, timezone?: string): CronSpec {
  try {
    // croner would silently read an unknown zone as UTC; Intl knows the IANA names.
    if (timezone) new Intl.DateTimeFormat('en', { timeZone: timezone });
    // Without a function the Cron only evaluates its pattern: nothing is scheduled.
    return { source: expr, timezone, pattern: new Cron(expr.trim(), { timezone, sloppyRanges: true }) };
  } catch (e) {
    throw new Error(`cron "${expr}"${timezone ? ` (${timezone})` : ''}: ${(e as Error).message}`);
  }
}

/** The first time after `from` that `spec` matches; throws when it never fires again. */
export function nextRun(spec: CronSpec, from: Date): Date {
  const next = spec.pattern.nextRun(from);
  if (!next) throw new Error(`cron "${spec.source}" never fires`);
  return next;
}

/** A setting's cron expression, trimmed, if croner accepts it (its reason as the 400's); empty only when `optional` (= off). */
export function checkCron(raw: string, field: string, optional: boolean): string {
  const cron = raw.trim();
  if (optional && cron === '') return cron;
  try {
    parseCron(cron);
  } catch (e) {
    throw validation(field, (e as Error).message);
  }
  return cron;
}
