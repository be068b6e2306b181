/** Row types of the public link guard's shared counters (owner: shares, `shares/link-load.repo.ts`), apart from tables.ts to keep it short. */
import type { TenantRow } from './tenant-tables';
/** shares: a public stream admitted in one of its link's numbered slots, held by an instance until `until` (ms). */
export interface LinkStreamsTable extends TenantRow {
  share_id: number;
  slot: number;
  holder: string;
  until: number;
  /** The client address of the stream (an accelerator's parallel ranges are seen on any instance). */
  ip: string | null;
}
/** shares: an accelerator strike of an address on a public link, and when (ms). */
export interface LinkStrikesTable extends TenantRow {
  share_id: number;
  ip: string;
  at: number;
}
/** shares: a client address a public link saw, and when (ms). */
export interface LinkVisitorsTable extends TenantRow {
  share_id: number;
  ip: string;
  seen_at: number;
}
