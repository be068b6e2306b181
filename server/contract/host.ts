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
  | InhibitHostMessage
  | { type: 'stopped' };

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
export type HostMessage = { type: 'drain'; timeout_ms?: number } | { type: 'pause'; paused: boolean };
