/** Turkish UI strings, one file per feature under tr/ (each typed against its English twin). */
import type { MessageKey } from './en';
import { core } from './tr/core';
import { files } from './tr/files';
import { sharing } from './tr/sharing';
import { access } from './tr/access';
import { admin } from './tr/admin';
import { replication } from './tr/replication';
import { assistant } from './tr/assistant';
import { apps } from './tr/apps';
import { nfs } from './tr/nfs';
import { store } from './tr/store';
import { vault } from './tr/vault';
import { vaultSharing } from './tr/vault-sharing';
import { tenants } from './tr/tenants';

export const tr: Record<MessageKey, string> = {
  ...core,
  ...files,
  ...sharing,
  ...access,
  ...admin,
  ...replication,
  ...assistant,
  ...apps,
  ...nfs,
  ...store,
  ...vault,
  ...vaultSharing,
  ...tenants,
};
