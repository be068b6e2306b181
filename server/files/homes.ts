/**
 * Home folders: every new person gets a private folder `<folder>/<name>` on the
 * home storage with an `editor` grant on it alone (catalogue/access: a folder
 * grant), made when the account is made, whichever door made it (admin, CLI,
 * sign-up, OIDC: UsersService.onCreated). The home storage is a setting
 * (`home_storage_id`; null = the default storage: the first storage this
 * installation got, seeded or added; an installation upgraded with storages
 * already in place has none until an admin picks one, so nothing changes for it). A
 * name that the path rules refuse, or whose folder already exists (a former
 * person's files stay theirs), gets a free variant (`name-2`, ... then `user-<id>`).
 * The settings are the installation's (per-tenant settings are a later step of docs/tenants.md), so the
 * home storage is tenant 1's (`DEFAULT_TENANT`) and only its people get a home on it (a grant joins only
 * its storage's tenant).
 */
import { systemActor } from '../auth';
import { DEFAULT_STORAGE_META, type StorageRow } from '../catalogue';
import { DEFAULT_TENANT, type Db } from '../db';
import { AppError } from '../errors';
import { checkName, cleanRel, joinRel, uiPath } from '../lib/paths';
import type { SettingsStore } from '../settings';
import type { FileService } from './file-service';

export interface HomesView {
  enabled: boolean;
  storage_id: number | null;
  folder: string;
  /** The storage homes go on now (the setting, else the default storage); null: none. */
  effective_storage: { id: number; name: string } | null;
}

export class Homes {
  constructor(private d: { files: FileService; settings: SettingsStore; db: Db; log: (level: 'warn', msg: string, e?: unknown) => void }) {}

  /** The storage new homes go on, or null (homes off, no storage picked and no default storage). */
  async storage(): Promise<StorageRow | null> {
    if (!this.d.settings.get('homes_enabled')) return null;
    const repo = this.d.files.catalogue.repo;
    const id = this.d.settings.get('home_storage_id') ?? Number((await this.d.db.meta.fact(DEFAULT_STORAGE_META)) ?? NaN);
    return (Number.isInteger(id) ? repo.byId(DEFAULT_TENANT, id) : undefined) ?? null;
  }

  storageExists(id: number): boolean {
    return !!this.d.files.catalogue.repo.byId(DEFAULT_TENANT, id);
  }

  async view(): Promise<HomesView> {
    const s = await this.storage();
    return {
      enabled: this.d.settings.get('homes_enabled'),
      storage_id: this.d.settings.get('home_storage_id'),
      folder: this.d.settings.get('home_folder'),
      effective_storage: s ? { id: s.id, name: s.name } : null,
    };
  }

  /** The UI path of the person's home (their first folder grant on the home storage), or null. */
  async homeOf(userId: number): Promise<string | null> {
    const s = await this.storage();
    const g = s && this.d.files.catalogue.repo.grants(s, s.id).find((x) => x.user_id === userId && x.path !== '');
    return s && g ? uiPath(s.name, g.path) : null;
  }

  /** Makes the person's home folder and its grant; returns its UI path (null: no home storage). Never throws. */
  async provision(user: { id: number; username: string }): Promise<string | null> {
    const s = await this.storage();
    if (!s) return null;
    const existing = await this.homeOf(user.id);
    if (existing) return existing;
    try {
      const files = this.d.files.forActor(systemActor('homes'));
      const parent = cleanRel(this.d.settings.get('home_folder'));
      const rel = await this.freeFolder(s, parent, user);
      await files.mkdir({ storage_id: s.id, rel });
      await this.d.files.catalogue.repo.grantFolder(s, s.id, user.id, rel, 'editor');
      return uiPath(s.name, rel);
    } catch (e) {
      this.d.log('warn', `could not make a home folder for ${user.username} on ${s.name}`, e);
      return null;
    }
  }

  private async freeFolder(s: StorageRow, parent: string, user: { id: number; username: string }): Promise<string> {
    const files = this.d.files.forActor(systemActor('homes'));
    const base = safeName(user.username.normalize('NFC')) ?? `user-${user.id}`;
    for (let i = 1; i <= 50; i++) {
      const rel = joinRel(parent, i === 1 ? base : `${base}-${i}`);
      if (!(await files.exists({ storage_id: s.id, rel }))) return rel;
    }
    return joinRel(parent, `user-${user.id}`);
  }
}

/** `name` when the path rules take it as one folder name, else null. */
function safeName(name: string): string | null {
  try {
    return checkName(name.trim()) && name.trim();
  } catch (e) {
    if (e instanceof AppError) return null;
    throw e;
  }
}
