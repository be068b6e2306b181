/** Names for the protection features' own folders. */
import { randomBytes } from 'node:crypto';

/** A sortable, collision-free folder name for one trash slot or snapshot: `20261121T101500123Z-1a2b3c`. */
export const slotName = (at = new Date()): string => `${at.toISOString().replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}`;
