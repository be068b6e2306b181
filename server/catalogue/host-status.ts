/**
 * The offline storages for a desktop host's tray (docs/server-host-protocol.md):
 * `tick()` reads them and sends a `storages` message only when the list
 * changes, so the periodic check almost never costs a message.
 */
import type { StoragesHostMessage } from '../contract';
import { hostLine, type HostLine } from '../lib/host-line';
import type { OfflineStorage } from './volumes';

export function offlineHostStatus(read: () => OfflineStorage[], send: (m: StoragesHostMessage) => void): HostLine {
  return hostLine<StoragesHostMessage>(
    () => ({ type: 'storages', offline: read().map((s) => ({ name: s.name, reason: s.reason, volume_state: s.volume_state })) }),
    send,
  );
}
