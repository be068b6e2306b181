/**
 * `ssh_keys`: the SSH public keys registered per account (the auth module
 * owns the table; `ssh-keys.ts` holds the rules). Adding is one serializable
 * unit (the duplicate and the per-account cap are read and decided with the
 * insert), removing one conditional statement. A key is its account's
 * tenant's, found only within it.
 */
import type { Db, TenantScope } from '../db';
import type { SshKeyView } from '../contract';
import type { SshKeysTable } from '../db/tables';

/** A key to register (`public_key`: the blob, base64). */
export type NewSshKey = Omit<SshKeysTable, 'id' | 'last_used_at' | 'tenant_id'>;

export class SshKeysRepo {
  constructor(private db: Db) {}

  private listing(s: TenantScope, userId: number) {
    return this.db.k
      .selectFrom('ssh_keys')
      .select(['id', 'name', 'algo', 'fingerprint', 'created_at', 'last_used_at'])
      .where('tenant_id', '=', s.tenant_id)
      .where('user_id', '=', userId)
      .orderBy('id');
  }

  /** The account's keys, oldest first. */
  list(s: TenantScope, userId: number): Promise<SshKeyView[]> {
    return this.db.async.all(this.listing(s, userId));
  }

  /** Inserts the key unless the account holds it already or holds `max` keys: its id, or why not. */
  add(s: TenantScope, key: NewSshKey, max: number): Promise<number | 'duplicate' | 'full'> {
    const listing = this.listing(s, key.user_id);
    const insert = this.db.k
      .insertInto('ssh_keys')
      .values({ ...key, tenant_id: s.tenant_id })
      .returning('id');
    return this.db.async.unit(
      function* (t) {
        const have = yield* t.all(listing);
        if (have.some((x) => x.fingerprint === key.fingerprint)) return 'duplicate' as const;
        if (have.length >= max) return 'full' as const;
        return (yield* t.first(insert))!.id;
      },
      { isolation: 'serializable' },
    );
  }

  /** Deletes one of the account's keys; what it was, or undefined when the account has no such key. */
  remove(s: TenantScope, userId: number, id: number): Promise<{ name: string; fingerprint: string } | undefined> {
    const del = this.db.k
      .deleteFrom('ssh_keys')
      .where('tenant_id', '=', s.tenant_id)
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returning(['name', 'fingerprint']);
    return this.db.async.unit(function* (t) {
      return yield* t.first(del);
    });
  }

  /** The account's key with this fingerprint (for a sign-in). */
  byFingerprint(s: TenantScope, userId: number, fingerprint: string): Promise<{ id: number; public_key: string } | undefined> {
    return this.db.async.first(
      this.db.k
        .selectFrom('ssh_keys')
        .select(['id', 'public_key'])
        .where('tenant_id', '=', s.tenant_id)
        .where('user_id', '=', userId)
        .where('fingerprint', '=', fingerprint),
    );
  }

  /** Records a signed sign-in with the key. */
  async touch(s: TenantScope, id: number, at: string): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('ssh_keys').set({ last_used_at: at }).where('tenant_id', '=', s.tenant_id).where('id', '=', id));
  }
}
