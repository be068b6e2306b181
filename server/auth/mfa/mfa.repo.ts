/**
 * The two-factor tables (owned by auth): `mfa_totp`, `mfa_recovery_codes`,
 * `mfa_passkeys`, `mfa_challenges`. Kysely-built, run synchronously, so the
 * checks that must not race (a step accepted once, a code used once, a
 * challenge consumed once) are single conditional writes.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../../db';
import type { MfaChallengesTable, MfaPasskeysTable, MfaTotpTable } from '../../db/tables';

export type TotpRow = Selectable<MfaTotpTable>;
export type PasskeyRow = Selectable<MfaPasskeysTable>;
export type ChallengeRow = Selectable<MfaChallengesTable>;

export class MfaRepo {
  constructor(private db: Db) {}

  // ---- TOTP

  /** The person's TOTP row (active, pending or both), or undefined. */
  totp(userId: number): TotpRow | undefined {
    return this.db.first(this.db.k.selectFrom('mfa_totp').selectAll().where('user_id', '=', userId));
  }

  /** Stores a pending (not yet confirmed) sealed secret; an active secret stays in force until confirmation. */
  setPending(userId: number, sealed: string, at: string): void {
    this.db.run(
      this.db.k
        .insertInto('mfa_totp')
        .values({ user_id: userId, pending_secret: sealed, pending_at: at, secret: null, confirmed_at: null })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ pending_secret: sealed, pending_at: at })),
    );
  }

  /** Makes the pending secret the active one, with `step` as the last accepted step. */
  activate(userId: number, step: number, at: string): void {
    this.db.run(
      this.db.k
        .updateTable('mfa_totp')
        .set((eb) => ({ secret: eb.ref('pending_secret'), pending_secret: null, pending_at: null, last_step: step, confirmed_at: at }))
        .where('user_id', '=', userId)
        .where('pending_secret', 'is not', null),
    );
  }

  /** Records `step` as accepted; false when it (or a later one) already was: a replay. */
  acceptStep(userId: number, step: number): boolean {
    return this.db.run(this.db.k.updateTable('mfa_totp').set({ last_step: step }).where('user_id', '=', userId).where('last_step', '<', step)) === 1;
  }

  /** Drops the person's TOTP (active and pending); returns whether an active one existed. */
  removeTotp(userId: number): boolean {
    const had = !!this.totp(userId)?.secret;
    this.db.run(this.db.k.deleteFrom('mfa_totp').where('user_id', '=', userId));
    return had;
  }

  /** Every person with an active TOTP or a passkey, and which of the two. */
  enrolledUsers(): Array<{ user_id: number; methods: Array<'totp' | 'passkey'> }> {
    const out = new Map<number, Array<'totp' | 'passkey'>>();
    for (const r of this.db.all(this.db.k.selectFrom('mfa_totp').select('user_id').where('secret', 'is not', null))) out.set(r.user_id, ['totp']);
    for (const r of this.db.all(this.db.k.selectFrom('mfa_passkeys').select('user_id').distinct())) out.set(r.user_id, [...(out.get(r.user_id) ?? []), 'passkey']);
    return [...out].sort((a, b) => a[0] - b[0]).map(([user_id, methods]) => ({ user_id, methods }));
  }

  // ---- recovery codes

  /** Replaces the person's codes with `hashes` in one transaction. */
  replaceCodes(userId: number, hashes: string[], at: string): void {
    this.db.sqlite.transaction(() => {
      this.removeCodes(userId);
      for (const code_hash of hashes) this.db.run(this.db.k.insertInto('mfa_recovery_codes').values({ user_id: userId, code_hash, created_at: at }));
    })();
  }

  unusedCodes(userId: number): Array<{ id: number; code_hash: string; created_at: string }> {
    return this.db.all(this.db.k.selectFrom('mfa_recovery_codes').select(['id', 'code_hash', 'created_at']).where('user_id', '=', userId).where('used_at', 'is', null).orderBy('id'));
  }

  /** Marks a code used; false when it already was (two requests raced with the same code). */
  useCode(id: number, at: string): boolean {
    return this.db.run(this.db.k.updateTable('mfa_recovery_codes').set({ used_at: at }).where('id', '=', id).where('used_at', 'is', null)) === 1;
  }

  removeCodes(userId: number): number {
    return this.db.run(this.db.k.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId));
  }

  // ---- passkeys

  /** The person's passkeys, oldest first; only those made for `rpId` when it is given. */
  passkeys(userId: number, rpId?: string): PasskeyRow[] {
    let q = this.db.k.selectFrom('mfa_passkeys').selectAll().where('user_id', '=', userId);
    if (rpId !== undefined) q = q.where('rp_id', '=', rpId);
    return this.db.all(q.orderBy('id'));
  }

  passkeyByCredential(credentialId: string): PasskeyRow | undefined {
    return this.db.first(this.db.k.selectFrom('mfa_passkeys').selectAll().where('credential_id', '=', credentialId));
  }

  insertPasskey(p: Omit<PasskeyRow, 'id' | 'last_used_at'>): number {
    const row = this.db.first(this.db.k.insertInto('mfa_passkeys').values(p).returning('id'));
    return row!.id;
  }

  /** Stores the authenticator's new signature counter after a sign-in with it. */
  touchPasskey(id: number, counter: number, at: string): void {
    this.db.run(this.db.k.updateTable('mfa_passkeys').set({ counter, last_used_at: at }).where('id', '=', id));
  }

  /** Removes one of the person's passkeys; false when it is not theirs or not there. */
  removePasskey(userId: number, id: number): boolean {
    return this.db.run(this.db.k.deleteFrom('mfa_passkeys').where('id', '=', id).where('user_id', '=', userId)) === 1;
  }

  removePasskeys(userId: number): number {
    return this.db.run(this.db.k.deleteFrom('mfa_passkeys').where('user_id', '=', userId));
  }

  // ---- challenges

  insertChallenge(c: ChallengeRow): void {
    this.db.run(this.db.k.insertInto('mfa_challenges').values(c));
  }

  /** The challenge stored under `id` (the hash of its token) while it has not expired at `now`. */
  challenge(id: string, now: string): ChallengeRow | undefined {
    return this.db.first(this.db.k.selectFrom('mfa_challenges').selectAll().where('id', '=', id).where('expires_at', '>', now));
  }

  /** Deletes a challenge; true for the one caller that deleted it (single use). */
  consumeChallenge(id: string): boolean {
    return this.db.run(this.db.k.deleteFrom('mfa_challenges').where('id', '=', id)) === 1;
  }

  /** Drops a person's challenges of one purpose (a new registration voids the previous one), or all of them. */
  removeChallenges(userId: number, purpose?: ChallengeRow['purpose']): number {
    let q = this.db.k.deleteFrom('mfa_challenges').where('user_id', '=', userId);
    if (purpose) q = q.where('purpose', '=', purpose);
    return this.db.run(q);
  }

  sweepChallenges(now: string): number {
    return this.db.run(this.db.k.deleteFrom('mfa_challenges').where('expires_at', '<=', now));
  }
}
