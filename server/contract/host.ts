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
  | { type: 'stopped' };

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

/** What the host sends the server. */
export type HostMessage = { type: 'drain'; timeout_ms?: number } | { type: 'pause'; paused: boolean };
