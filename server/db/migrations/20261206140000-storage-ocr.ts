import { portable } from './kit';

/**
 * A storage may have its scans read by OCR for search (owner: catalogue, `catalogue/storages.repo.ts`;
 * docs/fulltext.md, "OCR"): off unless an admin turns it on, storage by storage.
 */
export const storageOcr = portable('20261206140000-storage-ocr', ({ schema: s, int }) => [
  s.alterTable('storages').addColumn('ocr', int, (c) => c.notNull().defaultTo(0)),
]);
