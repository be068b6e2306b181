/**
 * The replication status for a desktop host's tray (docs/server-host-protocol.md):
 * `tick()` reads the live status and sends a `replica` message only when what
 * the tray shows changes (the recovery point counted in whole minutes), so a
 * periodic check costs one indexed read and almost never a message.
 */
import type { ReplicaHostMessage } from '../contract';
import { hostLine, type HostLine } from '../lib/host-line';
import type { RepairService } from './repair.service';

export const HOST_STATUS_EVERY_MS = 10_000;

export function replicaHostStatus(repair: RepairService, send: (m: ReplicaHostMessage) => void): HostLine {
  return hostLine<ReplicaHostMessage>(
    async () => {
      const s = await repair.installationStatus();
      return { type: 'replica', linked: s.linked, rpo_s: s.rpo_s, rpo_warn: s.rpo_warn, unresolved: s.unresolved };
    },
    send,
    (m) => [m.linked, Math.floor(m.rpo_s / 60), m.rpo_warn, m.unresolved],
  );
}
