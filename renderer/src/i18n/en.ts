/**
 * English UI strings, one file per feature under en/. `{name}` marks are filled
 * by `t(key, params)`. The Turkish files carry every key (type-checked).
 */
import { core } from './en/core';
import { files } from './en/files';
import { sharing } from './en/sharing';
import { access } from './en/access';
import { admin } from './en/admin';
import { replication } from './en/replication';
import { assistant } from './en/assistant';
import { apps } from './en/apps';
import { nfs } from './en/nfs';
import { store } from './en/store';
import { vault } from './en/vault';
import { vaultSharing } from './en/vault-sharing';
import { tenants } from './en/tenants';

export const en = {
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

export type MessageKey = keyof typeof en;
