/**
 * The two-factor tables (owned by auth): `mfa_totp`, `mfa_recovery_codes`,
 * `mfa_passkeys`, `mfa_challenges`. Kysely-built, on `db.async`. The checks
 * that must not race are single conditional statements (a step accepted
 * once, a code used once, a challenge consumed once, a pending secret
 * activated only as it was checked) or one unit of work (a set of codes
 * replaced, codes added or dropped depending on the other factors, a reset).
 * Every statement is within one tenant (docs/tenants.md): the person's.
 */
import type { Selectable } from 'kysely';
import type { Db, TenantScope } from '../../db';
import type { MfaChallengesTable, MfaPasskeysTable, MfaTotpTable } from '../../db/tables';

export type TotpRow = Selectable<MfaTotpTable>;
export type PasskeyRow = Selectable<MfaPasskeysTable>;
export type ChallengeRow = Selectable<MfaChallengesTable>;

export class MfaRepo {
  constructor(private db: Db) {}

  // ---- TOTP

  /** The person's TOTP row (active, pending or both), or undefined. */
  totp(s: TenantScope, userId: number): Promise<TotpRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('mfa_totp').selectAll().where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId));
  }

  /** Stores a pending (not yet confirmed) sealed secret; an active secret stays in force until confirmation. */
  async setPending(s: TenantScope, userId: number, sealed: string, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('mfa_totp')
        .values({ tenant_id: s.tenant_id, user_id: userId, pending_secret: sealed, pending_at: at, secret: null, confirmed_at: null })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ pending_secret: sealed, pending_at: at })),
    );
  }

  /**
   * Makes the pending secret the active one, with `step` as the last accepted step, only while it is still
   * `sealed` (the one the code was checked against); false when a new setup replaced it or another confirm
   * activated it meanwhile.
   */
  async activate(s: TenantScope, userId: number, sealed: string, step: number, at: string): Promise<boolean> {
    const q = this.db.k
      .updateTable('mfa_totp')
      .set((eb) => ({ secret: eb.ref('pending_secret'), pending_secret: null, pending_at: null, last_step: step, confirmed_at: at }))
      .where('tenant_id', '=', s.tenant_id)
      .where('user_id', '=', userId)
      .where('pending_secret', '=', sealed);
    return (await this.db.async.run(q)) === 1;
  }

  /** Records `step` as accepted; false when it (or a later one) already was: a replay. */
  async acceptStep(s: TenantScope, userId: number, step: number): Promise<boolean> {
    const q = this.db.k
      .updateTable('mfa_totp')
      .set({ last_step: step })
      .where('tenant_id', '=', s.tenant_id)
      .where('user_id', '=', userId)
      .where('last_step', '<', step);
    return (await this.db.async.run(q)) === 1;
  }

  /** Drops the person's TOTP (active and pending); whether an active one existed (true for one caller only). */
  async removeTotp(s: TenantScope, userId: number): Promise<boolean> {
    const del = this.db.k.deleteFrom('mfa_totp').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId).returning('secret');
    const row = await this.db.async.unit(function* (t) {
      return yield* t.first(del);
    });
    return !!row?.secret;
  }

  /** Whether the person has an active TOTP or a passkey. */
  enrolled(s: TenantScope, userId: number): Promise<boolean> {
    const totp = this.db.k
      .selectFrom('mfa_totp')
      .select('user_id')
      .where('tenant_id', '=', s.tenant_id)
      .where('user_id', '=', userId)
      .where('secret', 'is not', null);
    const passkey = this.db.k.selectFrom('mfa_passkeys').select('id').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId).limit(1);
    return this.db.async.read(function* (t) {
      return !!(yield* t.first(totp)) || !!(yield* t.first(passkey));
    });
  }

  /** Every person of the tenant with an active TOTP or a passkey, and which of the two. */
  enrolledUsers(s: TenantScope): Promise<Array<{ user_id: number; methods: Array<'totp' | 'passkey'> }>> {
    const totp = this.db.k.selectFrom('mfa_totp').select('user_id').where('tenant_id', '=', s.tenant_id).where('secret', 'is not', null);
    const passkeys = this.db.k.selectFrom('mfa_passkeys').select('user_id').where('tenant_id', '=', s.tenant_id).distinct();
    return this.db.async.read(function* (t) {
      const out = new Map<number, Array<'totp' | 'passkey'>>();
      for (const r of yield* t.all(totp)) out.set(r.user_id, ['totp']);
      for (const r of yield* t.all(passkeys)) out.set(r.user_id, [...(out.get(r.user_id) ?? []), 'passkey']);
      return [...out].sort((a, b) => a[0] - b[0]).map(([user_id, methods]) => ({ user_id, methods }));
    });
  }

  // ---- recovery codes

  /**
   * Replaces the person's codes with `hashes` in one serializable unit: two replacements racing leave one
   * whole set, never both.
   */
  async replaceCodes(s: TenantScope, userId: number, hashes: string[], at: string): Promise<void> {
    const del = this.db.k.deleteFrom('mfa_recovery_codes').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    const ins = this.insertCodes(s, userId, hashes, at);
    await this.db.async.unit(
      function* (t) {
        yield* t.run(del);
        yield* t.run(ins);
      },
      { isolation: 'serializable' },
    );
  }

  private insertCodes(s: TenantScope, userId: number, hashes: string[], at: string) {
    const tenant_id = s.tenant_id;
    return this.db.k.insertInto('mfa_recovery_codes').values(hashes.map((code_hash) => ({ tenant_id, user_id: userId, code_hash, created_at: at })));
  }

  unusedCodes(s: TenantScope, userId: number): Promise<Array<{ id: number; code_hash: string; created_at: string }>> {
    return this.db.async.all(
      this.db.k
        .selectFrom('mfa_recovery_codes')
        .select(['id', 'code_hash', 'created_at'])
        .where('tenant_id', '=', s.tenant_id)
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .orderBy('id'),
    );
  }

  /** Marks a code used; false when it already was (two requests raced with the same code). */
  async useCode(s: TenantScope, id: number, at: string): Promise<boolean> {
    const q = this.db.k
      .updateTable('mfa_recovery_codes')
      .set({ used_at: at })
      .where('tenant_id', '=', s.tenant_id)
      .where('id', '=', id)
      .where('used_at', 'is', null);
    return (await this.db.async.run(q)) === 1;
  }

  /**
   * Drops the person's codes when no second factor is left (after a factor was removed). One serializable
   * unit, so a passkey added meanwhile keeps them.
   */
  async removeCodesIfBare(s: TenantScope, userId: number): Promise<void> {
    const k = this.db.k;
    const del = k
      .deleteFrom('mfa_recovery_codes')
      .where('tenant_id', '=', s.tenant_id)
      .where('user_id', '=', userId)
      .where((eb) =>
        eb.not(
          eb.or([
            eb.exists(
              eb.selectFrom('mfa_totp').select('user_id').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId).where('secret', 'is not', null),
            ),
            eb.exists(eb.selectFrom('mfa_passkeys').select('id').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId)),
          ]),
        ),
      );
    await this.db.async.unit(
      function* (t) {
        yield* t.run(del);
      },
      { isolation: 'serializable' },
    );
  }

  // ---- passkeys

  /** The person's passkeys, oldest first; only those made for `rpId` when it is given. */
  passkeys(s: TenantScope, userId: number, rpId?: string): Promise<PasskeyRow[]> {
    let q = this.db.k.selectFrom('mfa_passkeys').selectAll().where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    if (rpId !== undefined) q = q.where('rp_id', '=', rpId);
    return this.db.async.all(q.orderBy('id'));
  }

  passkeyByCredential(s: TenantScope, credentialId: string): Promise<PasskeyRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('mfa_passkeys').selectAll().where('tenant_id', '=', s.tenant_id).where('credential_id', '=', credentialId));
  }

  /**
   * Stores a passkey and, when the person has no unused recovery code, `codeHashes` as their first set: the
   * stored row and whether the codes were stored; undefined when the credential is stored already (the
   * unique index decides). One serializable unit, so a factor removed meanwhile (which drops the codes of a
   * bare enrolment) and a second registration cannot leave a passkey without codes or two sets.
   */
  addPasskey(
    s: TenantScope,
    p: Omit<PasskeyRow, 'id' | 'last_used_at' | 'tenant_id'>,
    codeHashes: string[],
    at: string,
  ): Promise<{ passkey: PasskeyRow; codes: boolean } | undefined> {
    const k = this.db.k;
    const ins = k
      .insertInto('mfa_passkeys')
      .values({ ...p, tenant_id: s.tenant_id })
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .returningAll();
    const unused = k
      .selectFrom('mfa_recovery_codes')
      .select('id')
      .where('tenant_id', '=', s.tenant_id)
      .where('user_id', '=', p.user_id)
      .where('used_at', 'is', null)
      .limit(1);
    const codes = this.insertCodes(s, p.user_id, codeHashes, at);
    return this.db.async.unit(
      function* (t) {
        const passkey = yield* t.first(ins);
        if (!passkey) return undefined;
        if (yield* t.first(unused)) return { passkey, codes: false };
        yield* t.run(codes);
        return { passkey, codes: true };
      },
      { isolation: 'serializable' },
    );
  }

  /** Stores the authenticator's new signature counter after a sign-in with it. */
  async touchPasskey(s: TenantScope, id: number, counter: number, at: string): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('mfa_passkeys').set({ counter, last_used_at: at }).where('tenant_id', '=', s.tenant_id).where('id', '=', id));
  }

  /** Removes one of the person's passkeys; its name, or undefined when it is not theirs or not there (one caller gets it). */
  removePasskey(s: TenantScope, userId: number, id: number): Promise<{ name: string } | undefined> {
    const del = this.db.k.deleteFrom('mfa_passkeys').where('tenant_id', '=', s.tenant_id).where('id', '=', id).where('user_id', '=', userId).returning('name');
    return this.db.async.unit(function* (t) {
      return yield* t.first(del);
    });
  }

  /**
   * Removes every second factor of a person in one unit (TOTP, passkeys, recovery codes, open challenges):
   * whether an active TOTP existed and how many passkeys and unused codes went.
   */
  reset(s: TenantScope, userId: number): Promise<{ totp: boolean; passkeys: number; recovery_codes: number }> {
    const k = this.db.k;
    const totp = k.deleteFrom('mfa_totp').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId).returning('secret');
    const passkeys = k.deleteFrom('mfa_passkeys').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    const codes = k.deleteFrom('mfa_recovery_codes').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    const challenges = k.deleteFrom('mfa_challenges').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    return this.db.async.unit(function* (t) {
      const removed = { totp: !!(yield* t.first(totp))?.secret, passkeys: yield* t.run(passkeys), recovery_codes: yield* t.run(codes) };
      yield* t.run(challenges);
      return removed;
    });
  }

  // ---- challenges

  /** Stores a challenge, sweeping the tenant's expired at `now` with it (the table holds only what is open). */
  async insertChallenge(s: TenantScope, c: Omit<ChallengeRow, 'tenant_id'>, now: string): Promise<void> {
    const sweep = this.db.k.deleteFrom('mfa_challenges').where('tenant_id', '=', s.tenant_id).where('expires_at', '<=', now);
    const ins = this.db.k.insertInto('mfa_challenges').values({ ...c, tenant_id: s.tenant_id });
    await this.db.async.unit(function* (t) {
      yield* t.run(sweep);
      yield* t.run(ins);
    });
  }

  /** The challenge stored under `id` (the hash of its token) while it has not expired at `now`. */
  challenge(s: TenantScope, id: string, now: string): Promise<ChallengeRow | undefined> {
    return this.db.async.first(
      this.db.k.selectFrom('mfa_challenges').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id).where('expires_at', '>', now),
    );
  }

  /** Deletes a challenge; true for the one caller that deleted it (single use). */
  async consumeChallenge(s: TenantScope, id: string): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('mfa_challenges').where('tenant_id', '=', s.tenant_id).where('id', '=', id))) === 1;
  }

  /** Drops a person's challenges of one purpose (a new registration voids the previous one). */
  async removeChallenges(s: TenantScope, userId: number, purpose: ChallengeRow['purpose']): Promise<number> {
    return this.db.async.run(
      this.db.k.deleteFrom('mfa_challenges').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId).where('purpose', '=', purpose),
    );
  }
}
