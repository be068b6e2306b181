/** The caller's long-running operations, fed by the event stream and by polling; read by the ops panel. */
import { useSyncExternalStore } from 'react';
import type { Operation } from '../api/types';

let ops: Operation[] = [];
const listeners = new Set<() => void>();

const emit = () => listeners.forEach((f) => f());

/** Replaces the whole list (a poll answer). */
export function setOps(list: Operation[]): void {
  ops = list;
  emit();
}

/** Inserts or updates one op (an event frame), newest first. */
export function upsertOp(op: Operation): void {
  const i = ops.findIndex((o) => o.id === op.id);
  ops = i < 0 ? [op, ...ops] : ops.map((o) => (o.id === op.id ? { ...o, ...op } : o));
  emit();
}

export function useOps(): Operation[] {
  return useSyncExternalStore(
    (f) => {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    () => ops,
  );
}

let panelOpen = false;
const panelListeners = new Set<() => void>();

/** Opens the ops panel (a job the person just started); the panel's own button toggles it. */
export function setOpsPanelOpen(open: boolean): void {
  panelOpen = open;
  panelListeners.forEach((f) => f());
}
export const showOpsPanel = () => setOpsPanelOpen(true);

export function useOpsPanelOpen(): boolean {
  return useSyncExternalStore(
    (f) => {
      panelListeners.add(f);
      return () => panelListeners.delete(f);
    },
    () => panelOpen,
  );
}
