/**
 * The MOUNT version 3 program (RFC 1813 appendix I): MNT gives the root
 * handle of the export at a path (or of a folder inside it) to a client address the export allows
 * (else MNT3ERR_ACCES; no export there → MNT3ERR_NOENT); EXPORT lists only
 * the exports the asking address may mount. Mounts are not recorded (NFS
 * itself never needs it): DUMP is empty and UMNT only acknowledges.
 */
import { isAppError } from '../../errors';
import type { ExportBook } from './book';
import { Nfs3, NfsError } from './errors';
import type { Program } from './rpc';
import { XdrWriter } from './xdr';

export const MOUNT_PROGRAM = 100005;
const MNT3_OK = 0;
const MNT3ERR_NOENT = 2;
const MNT3ERR_ACCES = 13;
const MNT3ERR_NOTDIR = 20;
const MNTPATHLEN = 1024;
const AUTH_SYS = 1;

export function mountProgram(book: ExportBook, onMount: (ip: string, path: string, ok: boolean) => void): Program {
  return {
    prog: MOUNT_PROGRAM,
    vers: 3,
    procs: {
      0: () => [],
      // MNT
      1: async (r, ctx) => {
        const path = r.string(MNTPATHLEN);
        const w = new XdrWriter(96);
        const found = await book.byPath(path);
        if (!found) return [w.u32(MNT3ERR_NOENT).done()];
        const exp = found.exp;
        if (!(await book.allows(exp, ctx.ip))) {
          onMount(ctx.ip, path, false);
          return [w.u32(MNT3ERR_ACCES).done()];
        }
        let fh: Buffer;
        try {
          fh = await book.rootHandle(exp, await book.tree(exp, ctx.ip), found.sub);
        } catch (e) {
          onMount(ctx.ip, path, false);
          return [
            w
              .u32(isAppError(e) && e.code === 'not_found' ? MNT3ERR_NOENT : e instanceof NfsError && e.status === Nfs3.NOTDIR ? MNT3ERR_NOTDIR : MNT3ERR_ACCES)
              .done(),
          ];
        }
        onMount(ctx.ip, path, true);
        return [w.u32(MNT3_OK).opaque(fh).u32(1).u32(AUTH_SYS).done()];
      },
      // DUMP
      2: () => [new XdrWriter(4).bool(false).done()],
      // UMNT
      3: (r) => {
        r.string(MNTPATHLEN);
        return [];
      },
      // UMNTALL
      4: () => [],
      // EXPORT
      5: async (_r, ctx) => {
        const w = new XdrWriter(256);
        for (const exp of await book.mountable(ctx.ip)) {
          w.bool(true).string(book.mountPath(exp));
          for (const g of exp.clients
            .split(',')
            .map((c) => c.trim())
            .filter(Boolean))
            w.bool(true).string(g);
          w.bool(false);
        }
        return [w.bool(false).done()];
      },
    },
  };
}
