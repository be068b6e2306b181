/**
 * `docserver_saves`: the newest document-editor save written back, per node
 * (the docserver module owns the table; `callback.service.ts` holds the
 * rules). The service reads the row, writes the file, then records: the file
 * write sits between, so that is no unit of work; saves of one node are
 * serialised in the service instead.
 */
import type { Db } from '../db';
import type { DocserverSavesTable } from '../db/tables';

export type SaveRow = DocserverSavesTable;

export class DocserverSavesRepo {
  constructor(private db: Db) {}

  /** The newest save recorded for the node, or undefined. */
  async last(node: number): Promise<SaveRow | undefined> {
    const row = await this.db.async.first(this.db.k.selectFrom('docserver_saves').selectAll().where('node_id', '=', node));
    // `lastsave` is epoch ms: a bigint, which PostgreSQL answers as a string.
    return row && { ...row, node_id: Number(row.node_id), lastsave: Number(row.lastsave) };
  }

  /** Records a save written (replaces the node's earlier one). */
  async record(s: SaveRow): Promise<void> {
    const { node_id, ...rest } = s;
    await this.db.async.run(
      this.db.k
        .insertInto('docserver_saves')
        .values(s)
        .onConflict((oc) => oc.column('node_id').doUpdateSet(rest)),
    );
  }
}
