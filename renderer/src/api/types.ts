/**
 * Wire shapes come from the server's contract (server/contract); this file
 * only adds the UI's own relaxations of them.
 */
import type * as W from '../../../server/contract';
import type { FileEntry, Me, UserView } from '../../../server/contract';

export type {
  AdminStorage,
  AuditEvent,
  DropSettings,
  ExternalService,
  Operation,
  ShareCreated,
  SortDir,
  SortKey,
  StorageQuota,
  SyncRunDetail as SyncRun,
  UpdateStatus,
  UploadSession,
  UploadStatus,
  ApiErrorBody as ErrorEnvelope,
  Capabilities,
  OidcSettingsView,
  OidcTestResult,
  MfaChallenge,
  MfaEnrolledUser,
  MfaStatus,
  PasskeyView,
  TotpSetup,
  ApiKeyCreated,
  ApiKeyView,
  GroupView,
  KeyVerb,
  PermissionCatalogue,
  RoleView,
  SessionView,
  SshKeyView,
  TrashItem,
  VersionView,
  DocserverEditor,
  ExternalTestReport,
  NewdocType,
  StorageMeter,
} from '../../../server/contract';

/** A storage plugin may describe select options as objects, and forms build fields before the server names them. */
export type DriverField = Omit<W.DriverField, 'i18n_key' | 'options'> & { i18n_key?: string; options?: Array<string | { value: string; label?: string }> };
export type DriverDescriptor = Omit<W.DriverDescriptor, 'capabilities' | 'fields' | 'i18n_key'> & {
  i18n_key?: string;
  capabilities: Partial<W.DriverCapabilities>;
  fields: DriverField[];
};

/** A grant as the form edits it (no id until saved). */
export type Grant = Pick<W.Grant, 'level'> & Partial<W.Grant>;

/** A link as the UI holds it (the fields of a fresh create answer are enough). */
export type Share = Pick<W.ShareView, 'id' | 'path' | 'token' | 'url'> & Partial<W.ShareView>;

/** A person: the signed-in one (`/api/auth/me`) or a row of the admin user list. */
export type User = Me & Partial<UserView>;

/** A listing or search row: the server's File entry; the UI also builds bare rows (folders it just made). */
export type Entry = Pick<FileEntry, 'id' | 'name' | 'type' | 'size' | 'modified'> & Partial<FileEntry>;

export type Listing = Omit<W.Listing, 'entries'> & { entries: Entry[] };
