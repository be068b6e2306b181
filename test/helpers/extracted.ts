import type { TextExtractsRepo } from '../../server/catalogue';
import type { TestServer } from './server';

/**
 * The extraction row of `rel` on storage `storageId` once it has left `pending` for the file's current
 * version (size and mtime as catalogued); fails naming the file and its last row after `ms`.
 */
export async function extractedRow(s: TestServer, texts: TextExtractsRepo, storageId: number, rel: string, ms: number) {
  const until = Date.now() + ms;
  for (;;) {
    const node = await s.server.catalogue.nodes.get(s.server.catalogue.storageOf(storageId), rel);
    const row = node && (await texts.byId(node, node.id));
    if (row && row.state !== 'pending' && row.size === node.size && row.mtime === node.mtime) return row;
    if (Date.now() > until) throw new Error(`${rel} not extracted: ${JSON.stringify(row)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
