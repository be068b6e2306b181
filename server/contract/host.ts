/**
 * The server↔host protocol (docs/server-host-protocol.md): messages over
 * Electron's utilityProcess port or Node's fork IPC channel.
 */

/** What the server sends its host. */
export type ServerMessage =
  | { type: 'ready'; port: number; url: string }
  | { type: 'fatal'; message: string; code: number }
  | { type: 'activity'; transfers: number; ops: number; syncing: boolean }
  | { type: 'notify'; event: string; title: string; body: string }
  | ReplicaHostMessage
  | StoragesHostMessage
  | GovernorHostMessage
  | InhibitHostMessage
  | UplinkHostMessage
  | { type: 'stopped' };

/**
 * The tray's uplink and budget lines: public-link egress now and its budget
 * (Mbit/s, one decimal; budget 0 = none), links the guard suspended, and the
 * request budgets of metered storages that have one.
 */
export interface UplinkHostMessage {
  type: 'uplink';
  egress_mbps: number;
  budget_mbps: number;
  suspended_links: number;
  budgets: Array<{ name: string; used_today: number; budget_per_day: number; exhausted: boolean }>;
}

/** The tray's offline storages: a drive unplugged, another drive at its place, a backend unreachable. */
export interface StoragesHostMessage {
  type: 'storages';
  offline: Array<{ name: string; reason: string | null; volume_state: 'missing' | 'foreign' | null }>;
}

/**
 * The tray's backup line: whether any storage is linked to a backup target,
 * the recovery point (age of the oldest change not yet on its target) and
 * whether it is above the warning threshold, and the unresolved failures.
 */
export interface ReplicaHostMessage {
  type: 'replica';
  linked: boolean;
  rpo_s: number;
  rpo_warn: boolean;
  unresolved: number;
}

/**
 * The tray's background line: the governor's lanes, CPU over the last window
 * against the budget (percent of one core; 0 = no limit), and why work waits.
 */
export interface GovernorHostMessage {
  type: 'governor';
  lanes: number;
  active: number;
  cpu_percent: number;
  budget_percent: number;
  paused: boolean;
  pause_reasons: Array<'user' | 'sleep'>;
  on_battery: boolean;
  user_idle: boolean;
}

/**
 * Power and presence as the host sees them: on battery or mains, the user
 * away (idle or locked) or at the machine, and the computer going to sleep or
 * waking up. The governor drops to one lane on battery or with the user
 * present, and starts nothing between `sleep` and `wake`.
 */
export type PowerHostMessage = { type: 'power'; on_battery: boolean; user_idle: boolean } | { type: 'sleep' } | { type: 'wake' };

/**
 * Keep the computer awake (`active`) while these run: `transfers` (public
 * downloads and uploads in flight) and long ops by kind (`files.transfer`,
 * `archive.extract`, `archive.add`, `replica.copy`). The host holds a bounded
 * OS sleep inhibitor and defers its self-update while active.
 */
export interface InhibitHostMessage {
  type: 'inhibit';
  active: boolean;
  reasons: InhibitReason[];
}

export interface InhibitReason {
  kind: string;
  count: number;
}

/** What the host sends the server. */
export type HostMessage = { type: 'drain'; timeout_ms?: number } | { type: 'pause'; paused: boolean } | PowerHostMessage;
