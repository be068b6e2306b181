/**
 * The UI's vault store (docs/vault.md "The UI's vault store"). Unlocked keys
 * and folder keyrings live in this module's memory only — never localStorage,
 * IndexedDB or a cookie — and are forgotten on "Lock", on sign-out (the
 * VaultHost unmounts) and after IDLE_MS without activity. The crypto module
 * (and its Argon2id WASM) is loaded on first use, not with the first page.
 */
import { useSyncExternalStore } from 'react';
import type { FolderKeyring, VaultKeys, VaultRecord } from './crypto';
import * as vaultApi from './vault-api';
import type { VaultFolder } from './vault-api';
import { folderAt } from './vault-paths';

export const IDLE_MS = 15 * 60 * 1000;

type Crypto = typeof import('./crypto');
let cryptoModule: Promise<Crypto> | null = null;
/** The crypto module, loaded once (a chunk of its own). */
export const vaultCrypto = (): Promise<Crypto> => (cryptoModule ??= import('./crypto'));

export type VaultState = 'none' | 'locked' | 'unlocked';

interface Snapshot {
  state: VaultState;
  keys: VaultKeys | null;
  /** False until the person's vault record has been read once. */
  loaded: boolean;
}

let userId: number | null = null;
/** undefined: not read yet; null: the person has no vault. */
let record: VaultRecord | null | undefined;
let keys: VaultKeys | null = null;
let rings = new Map<number, Promise<FolderKeyring>>();
let folders: Promise<VaultFolder[]> | null = null;
let lastActivity = Date.now();
let unlockWaiters: { resolve: (k: VaultKeys) => void; reject: (e: Error) => void }[] = [];
let snap: Snapshot = { state: 'locked', keys: null, loaded: false };
const listeners = new Set<() => void>();

function publish(): void {
  const state: VaultState = record === null ? 'none' : keys ? 'unlocked' : 'locked';
  snap = { state, keys, loaded: record !== undefined };
  for (const l of listeners) l();
}

const subscribe = (fn: () => void) => {
  listeners.add(fn);
  return () => listeners.delete(fn);
};

/** React hook: the vault's state for the signed-in person. */
export function useVault(): Snapshot {
  return useSyncExternalStore(subscribe, () => snap);
}

/** Whether the unlock dialog is asked for (VaultHost shows it). */
export function useUnlockRequested(): boolean {
  return useSyncExternalStore(subscribe, () => unlockWaiters.length > 0);
}

let reading: Promise<VaultRecord | null> | null = null;
/** Re-reads the person's vault record from the server. */
export function refreshRecord(): Promise<VaultRecord | null> {
  reading ??= vaultApi
    .getVault()
    .then((v) => {
      record = v && {
        kdf: v.kdf,
        public_key: v.public_key,
        wrapped_private_key: v.wrapped_private_key,
        recovery_wrapped_private_key: v.recovery_wrapped_private_key,
      };
      publish();
      return record;
    })
    .finally(() => {
      reading = null;
    });
  return reading;
}

/** Called by VaultHost with the signed-in person; another person (or none) forgets everything. */
export function setVaultUser(id: number | null): void {
  if (id === userId) return;
  lock();
  userId = id;
  record = undefined;
  folders = null;
  publish();
  if (id !== null) void refreshRecord().catch(() => {});
}

function currentUser(): number {
  if (userId === null) throw new Error('no signed-in person');
  return userId;
}

async function currentRecord(): Promise<VaultRecord> {
  const r = record === undefined ? await refreshRecord() : record;
  if (!r) throw new Error('no vault');
  return r;
}

function unlocked(k: VaultKeys): VaultKeys {
  keys = k;
  lastActivity = Date.now();
  for (const w of unlockWaiters) w.resolve(k);
  unlockWaiters = [];
  publish();
  return k;
}

const lockHooks = new Set<() => void>();
/** `fn` runs at every lock (caches of decrypted names and thumbnails drop what they hold). */
export function onLock(fn: () => void): void {
  lockHooks.add(fn);
}

/** Forgets the keys, every folder keyring and whatever was decrypted with them. */
export function lock(): void {
  keys = null;
  rings = new Map();
  for (const fn of lockHooks) fn();
  for (const w of unlockWaiters) w.reject(new DOMException('locked', 'AbortError'));
  unlockWaiters = [];
  publish();
}

/** The unlocked keys, or the unlock dialog's result; rejects (AbortError) when it is cancelled. */
export function requestUnlock(): Promise<VaultKeys> {
  if (keys) return Promise.resolve(keys);
  return new Promise((resolve, reject) => {
    unlockWaiters.push({ resolve, reject });
    publish();
  });
}

/** The unlock dialog was closed without unlocking. */
export function cancelUnlock(): void {
  for (const w of unlockWaiters) w.reject(new DOMException('cancelled', 'AbortError'));
  unlockWaiters = [];
  publish();
}

/** Unlocks with the passphrase (`VaultError('wrong_passphrase')` when it is not the one). */
export async function unlock(passphrase: string): Promise<VaultKeys> {
  const c = await vaultCrypto();
  const r = await c.unlockVault(await currentRecord(), passphrase, currentUser());
  return unlocked(r.keys);
}

/** Creates the vault; answers the recovery key, which the page shows once. The vault is unlocked afterwards. */
export async function setUp(passphrase: string): Promise<string> {
  const c = await vaultCrypto();
  const made = await c.createVault(passphrase, currentUser());
  await vaultApi.createVault({ ...made.record, auth: made.auth, recovery_auth: made.recovery_auth });
  record = made.record;
  unlocked(made.keys);
  return made.recoveryKey;
}

/** Proves the old passphrase and stores the private key wrapped under the new one. */
export async function changePassphrase(oldPassphrase: string, newPassphrase: string): Promise<void> {
  const c = await vaultCrypto();
  const old = await c.unlockVault(await currentRecord(), oldPassphrase, currentUser());
  const next = await c.rewrapPrivateKey(old.keys, newPassphrase);
  await vaultApi.changePassphrase({ auth: old.auth, kdf: next.kdf, wrapped_private_key: next.wrapped_private_key, new_auth: next.auth });
  await refreshRecord();
  unlocked(old.keys);
}

/** "Forgot passphrase": the recovery key opens the private key, which is wrapped under a new passphrase. */
export async function resetWithRecovery(recoveryKey: string, newPassphrase: string): Promise<void> {
  const c = await vaultCrypto();
  const rec = await c.unlockWithRecovery(await currentRecord(), recoveryKey, currentUser());
  const next = await c.rewrapPrivateKey(rec.keys, newPassphrase);
  await vaultApi.recover({ recovery_auth: rec.recovery_auth, kdf: next.kdf, wrapped_private_key: next.wrapped_private_key, new_auth: next.auth });
  await refreshRecord();
  unlocked(rec.keys);
}

/** The encrypted folders the person is a member of (cached until a change here or a new person). */
export function vaultFolders(): Promise<VaultFolder[]> {
  if (record === null) return Promise.resolve([]);
  folders ??= vaultApi.listFolders().catch((e) => {
    folders = null;
    throw e;
  });
  return folders;
}

/** Drops the cached folder list (a folder was made, or a listing named a root this list lacks). */
export function forgetFolders(): void {
  folders = null;
}

/** The encrypted folder holding `path` (its root or anything below), if the person is a member of one. */
export async function folderOfPath(path: string): Promise<VaultFolder | null> {
  return folderAt(await vaultFolders(), path);
}

/** Every key version of the folder, unwrapped with the person's private key (unlocking first if needed). */
export function folderRing(folderId: number): Promise<FolderKeyring> {
  let ring = rings.get(folderId);
  if (!ring) {
    ring = (async () => {
      const k = await requestUnlock();
      const [c, folder] = await Promise.all([vaultCrypto(), vaultApi.getFolder(folderId)]);
      const all = await Promise.all(folder.keys.map((x) => c.unwrapFolderKey(x.wrapped_key, k, folderId, x.version)));
      return new c.FolderKeyring(folderId, all);
    })();
    rings.set(folderId, ring);
    ring.catch(() => rings.delete(folderId));
  }
  return ring;
}

/** After a rotation (members changed): the next use re-reads the folder's keys. */
export function forgetFolder(folderId: number): void {
  rings.delete(folderId);
  folders = null;
}

/**
 * Makes an encrypted folder `name` in the plain folder `parent`: the server makes it and gives it an id,
 * then the first folder key, wrapped for the person with that id bound in, is sent as version 1.
 */
export async function createEncryptedFolder(parent: string, name: string): Promise<VaultFolder> {
  const k = await requestUnlock();
  const c = await vaultCrypto();
  const made = await vaultApi.createFolder(`${parent.replace(/\/+$/, '')}/${name}`);
  const wrapped = await c.wrapFolderKey(c.newFolderKey(), k.publicKey, made.id, 1, k.userId);
  const folder = await vaultApi.setMembers(made.id, 1, [{ user_id: k.userId, wrapped_key: wrapped }]);
  folders = null;
  return folder;
}

/** Activity (a key or a pointer) postpones the idle lock. */
export function touch(now = Date.now()): void {
  lastActivity = now;
}

/** Locks when the person has been idle for IDLE_MS; VaultHost calls it on a timer. */
export function lockIfIdle(now = Date.now()): void {
  if (keys && now - lastActivity >= IDLE_MS) lock();
}
