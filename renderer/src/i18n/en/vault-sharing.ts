/** English strings: members of an encrypted folder, links to encrypted files (docs/vault.md). */
export const vaultSharing = {
  'vault.members': 'Members…',
  'vault.members.title': 'Members of “{name}”',
  'vault.members.new_reads': 'A person you add can read the files added from now on. Files already in the folder stay closed to them.',
  'vault.members.removed_keeps': 'A person you remove can no longer open the folder, but keeps whatever they downloaded or copied before.',
  'vault.members.current': 'Members',
  'vault.members.owner': 'owner',
  'vault.members.new': 'new',
  'vault.members.add': 'Add a person',
  'vault.members.search': 'Name of someone with a vault',
  'vault.members.found': 'People with a vault',
  'vault.members.none_found': 'Nobody with a vault matches.',
  'vault.members.owner_only': 'Only the owner ({owner}) can change the members.',
  'vault.members.saved': 'Members saved. Files added from now on use the new key.',
  'vault.members.no_vault': '{name} has no vault any more: remove them to save.',
  'share.vault.intro': 'This file is encrypted. Its link carries the file’s key, so the server passes the file on without being able to read it.',
  'share.vault.key_in_link': 'The key to this file is in the link itself: anyone with the whole link can read the file. Send it only to the people it is for.',
} as const;
