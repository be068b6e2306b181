/**
 * Installed language packs (migration 20261206141000-language-packs): the only
 * writer of `language_packs`. One statement per change, so an upgrade replaces
 * a pack whole or not at all.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../db';
import type { LanguagePacksTable } from '../db/tables';

/** A row as stored; `pack` is the verified pack file's JSON. */
export type LanguagePackRow = Selectable<LanguagePacksTable>;

export class LanguagePacksRepo {
  constructor(private db: Db) {}

  async list(): Promise<LanguagePackRow[]> {
    return this.db.async.all(this.db.k.selectFrom('language_packs').selectAll().orderBy('id'));
  }

  /** Installs or replaces the pack of `row.id`. */
  async put(row: LanguagePackRow): Promise<void> {
    const { id, ...rest } = row;
    await this.db.async.run(
      this.db.k
        .insertInto('language_packs')
        .values(row)
        .onConflict((oc) => oc.column('id').doUpdateSet(rest)),
    );
  }

  async remove(id: string): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('language_packs').where('id', '=', id))) > 0;
  }
}
