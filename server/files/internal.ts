/**
 * The file service's place-addressed storage operations, for the trusted
 * modules whose work is itself part of writing (trash, versions, antivirus,
 * thumbnails) and for the composition root. No door may import this (the
 * dependency check enforces it): doors go through `forActor`.
 */
export { StorageOps } from './storage-ops';
