/**
 * The optional channel to a host process (docs/server-host-protocol.md):
 * Electron's utilityProcess gives `process.parentPort`, Node's fork gives
 * `process.send`. Without either, messages are dropped.
 */
export type HostMessage =
  | { type: 'ready'; port: number; url: string }
  | { type: 'fatal'; message: string; code: number }
  | { type: 'activity'; transfers: number; ops: number; syncing: boolean }
  | { type: 'notify'; event: string; title: string; body: string }
  | { type: 'stopped' };

export type HostCommand = { type: 'drain'; timeout_ms?: number } | { type: 'pause'; paused: boolean };

interface ParentPort {
  postMessage(m: unknown): void;
  on(ev: 'message', fn: (e: { data: unknown }) => void): void;
}
const parentPort = (): ParentPort | undefined => (process as unknown as { parentPort?: ParentPort }).parentPort;

export function hasHost(): boolean {
  return !!parentPort() || typeof process.send === 'function';
}

export function toHost(m: HostMessage): void {
  const pp = parentPort();
  if (pp) pp.postMessage(m);
  else if (typeof process.send === 'function' && process.connected) process.send(m);
}

export function onHostCommand(fn: (c: HostCommand) => void): void {
  const accept = (m: unknown) => {
    if (m && typeof m === 'object' && typeof (m as { type?: unknown }).type === 'string') fn(m as HostCommand);
  };
  const pp = parentPort();
  if (pp) pp.on('message', (e) => accept(e.data));
  else if (typeof process.send === 'function') process.on('message', accept);
}
