/**
 * The catalogue's second face: the live drivers and the write gate. Only the
 * file service (server/files) and the composition root import it (the
 * dependency check enforces that); every other module reaches storages
 * through the file service.
 */
import type { DriverPool } from './driver-pool';
import type { FolderTurns } from './folder-turns';
import type { WriteGate } from './write-gate';

export interface CatalogueIo {
  drivers: DriverPool;
  gate: WriteGate;
  /** Shared with the sync engine's folder checks: a move holds the folders it touches until the gate recorded it. */
  turns: FolderTurns;
}

export type { DriverPool } from './driver-pool';
export type { WriteGate, WriteContext, GateNode } from './write-gate';
