/**
 * The wire contract: every response shape the web UI and the desktop shell
 * read, and the server↔host protocol in both directions. Types only, no
 * runtime code; the server's presenters are typed against these, and
 * `renderer/` and `electron/` may import from here and nothing else of
 * `server/` (the dependency check enforces it).
 */
export type * from './common';
export type * from './capabilities';
export type * from './files';
export type * from './ops';
export type * from './shares';
export type * from './uploads';
export type * from './admin';
export type * from './update';
export type * from './host';
export type * from './mfa';
export type * from './access';
export type * from './gateways';
export type * from './docserver';
export type * from './replication';
export type * from './assistant';
export type * from './backups';
