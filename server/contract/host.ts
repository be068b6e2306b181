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
  | { type: 'stopped' };

/** What the host sends the server. */
export type HostMessage = { type: 'drain'; timeout_ms?: number } | { type: 'pause'; paused: boolean };
