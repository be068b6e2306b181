/**
 * The optional channel to a host process (docs/server-host-protocol.md):
 * Electron's utilityProcess gives `process.parentPort`, Node's fork gives
 * `process.send`. Without either, messages are dropped.
 */
import type { HostMessage, ServerMessage } from '../contract';

export type { ServerMessage, HostMessage };

interface ParentPort {
  postMessage(m: unknown): void;
  on(ev: 'message', fn: (e: { data: unknown }) => void): void;
}
const parentPort = (): ParentPort | undefined => (process as unknown as { parentPort?: ParentPort }).parentPort;

export function hasHost(): boolean {
  return !!parentPort() || typeof process.send === 'function';
}

export function toHost(m: ServerMessage): void {
  const pp = parentPort();
  if (pp) pp.postMessage(m);
  else if (typeof process.send === 'function' && process.connected) process.send(m);
}

export function onHostCommand(fn: (c: HostMessage) => void): void {
  const accept = (m: unknown) => {
    if (m && typeof m === 'object' && typeof (m as { type?: unknown }).type === 'string') fn(m as HostMessage);
  };
  const pp = parentPort();
  if (pp) pp.on('message', (e) => accept(e.data));
  else if (typeof process.send === 'function') process.on('message', accept);
}
