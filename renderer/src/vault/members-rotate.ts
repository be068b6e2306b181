/**
 * A change of an encrypted folder's member set (docs/vault.md, "Folder keys"):
 * a new folder key as the next version, wrapped for every member of the new
 * set (the owner included) with their public key. Old versions are not sent:
 * a new member gets only the new one, so files from before they joined stay
 * closed to them; the server deletes a removed member's keys.
 */
import type { VaultPerson } from './members-api';

export type KeyedPerson = VaultPerson & { public_key: string };

type Crypto = Pick<typeof import('./crypto'), 'newFolderKey' | 'wrapFolderKey'>;

export async function rotateMembers(
  c: Crypto,
  folderId: number,
  currentVersion: number,
  members: KeyedPerson[],
): Promise<{ key_version: number; members: Array<{ user_id: number; wrapped_key: string }> }> {
  const version = currentVersion + 1;
  const key = c.newFolderKey();
  const wrapped = await Promise.all(members.map((m) => c.wrapFolderKey(key, m.public_key, folderId, version, m.id)));
  key.fill(0);
  return { key_version: version, members: members.map((m, i) => ({ user_id: m.id, wrapped_key: wrapped[i] })) };
}
