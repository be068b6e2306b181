import { portable } from './kit';

/**
 * The owner and lease of a running finalize (owner: uploads): `finalizing_by`
 * is the instance id that claimed the session, `finalize_until` (ms) is
 * renewed while it works. Recovery and sweeps touch a `finalizing` session
 * only once its lease passed (its instance died), so a starting instance
 * leaves another's finalize alone (docs/operations.md, "Several instances").
 */
export const uploadFinalizeLease = portable('20261127160000-upload-finalize-lease', ({ schema: s, int }) => [
  s.alterTable('upload_sessions').addColumn('finalizing_by', 'text'),
  s.alterTable('upload_sessions').addColumn('finalize_until', int),
]);
