import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md, "Step 1: assistant and vault"): the assistant's and the vault's
 * tables are scoped, and a row carries its owner's tenant. Until now every row kept the column's default
 * (tenant 1) whatever its owner's: a conversation, a preference and a vault take their person's tenant, a
 * step its conversation's, an encrypted folder its storage's, a folder's keys the folder's and an encrypted
 * thumbnail its node's. Single-tenant mode changes no row. No index changes: every statement already finds
 * its rows by a key (user, conversation, folder, node) and the tenant is one more term on those few rows.
 */
export const assistantVaultTenant = portable('20261207180200-assistant-vault-tenant', () => [
  `UPDATE assistant_conversations SET tenant_id = u.tenant_id FROM users u
WHERE u.id = assistant_conversations.user_id AND assistant_conversations.tenant_id <> u.tenant_id`,
  `UPDATE assistant_steps SET tenant_id = c.tenant_id FROM assistant_conversations c
WHERE c.id = assistant_steps.conversation_id AND assistant_steps.tenant_id <> c.tenant_id`,
  'UPDATE assistant_prefs SET tenant_id = u.tenant_id FROM users u WHERE u.id = assistant_prefs.user_id AND assistant_prefs.tenant_id <> u.tenant_id',
  'UPDATE vaults SET tenant_id = u.tenant_id FROM users u WHERE u.id = vaults.user_id AND vaults.tenant_id <> u.tenant_id',
  `UPDATE encrypted_folders SET tenant_id = s.tenant_id FROM storages s
WHERE s.id = encrypted_folders.storage_id AND encrypted_folders.tenant_id <> s.tenant_id`,
  `UPDATE encrypted_folder_keys SET tenant_id = f.tenant_id FROM encrypted_folders f
WHERE f.id = encrypted_folder_keys.folder_id AND encrypted_folder_keys.tenant_id <> f.tenant_id`,
  'UPDATE encrypted_thumbs SET tenant_id = n.tenant_id FROM nodes n WHERE n.id = encrypted_thumbs.node_id AND encrypted_thumbs.tenant_id <> n.tenant_id',
]);
