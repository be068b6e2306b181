/**
 * The updater's memory across restarts, in `<dataDir>/update-state.json`:
 * the last check and its error, the cached manifest (so the status never needs
 * the network), the versions already announced and the last upgrade. (The swap
 * journal lives beside the install instead: see bundle-port.ts.)
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { UpdateErrorInfo } from '../contract';
import type { Manifest } from './manifest';

export type { UpdateErrorInfo };

export interface PersistedState {
  checkedAt: string | null;
  lastError: UpdateErrorInfo | null;
  manifest: Manifest | null;
  announced: string[];
  lastApplied: { from: string; to: string; at: string; restartRequired: boolean } | null;
}

const EMPTY: PersistedState = { checkedAt: null, lastError: null, manifest: null, announced: [], lastApplied: null };

export const stateFile = (dataDir: string): string => join(dataDir, 'update-state.json');

/** Reads the state; a missing or unreadable file starts afresh (it only holds caches and history). */
export function loadState(dataDir: string): PersistedState {
  try {
    return { ...EMPTY, ...(JSON.parse(readFileSync(stateFile(dataDir), 'utf8')) as Partial<PersistedState>) };
  } catch {
    return { ...EMPTY };
  }
}

/** Writes atomically (temp file + rename) so a crash never leaves half a journal. */
export function saveState(dataDir: string, state: PersistedState): void {
  const file = stateFile(dataDir);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}
