/**
 * The offline storages for a desktop host's tray (docs/server-host-protocol.md):
 * `tick()` reads them and sends a `storages` message only when the list
 * changes, so the periodic check almost never costs a message.
 */
import type { StoragesHostMessage } from '../contract';
import type { OfflineStorage } from './volumes';

export function offlineHostStatus(read: () => OfflineStorage[], send: (m: StoragesHostMessage) => void): { tick(): void } {
  let last = '';
  return {
    tick() {
      let m: StoragesHostMessage;
      try {
        m = { type: 'storages', offline: read().map((s) => ({ name: s.name, reason: s.reason, volume_state: s.volume_state })) };
      } catch {
        return; // the database closing under a last tick: the tray keeps its line until the next one
      }
      const key = JSON.stringify(m.offline);
      if (key === last) return;
      last = key;
      send(m);
    },
  };
}
