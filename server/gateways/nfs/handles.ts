/**
 * NFS file handles: what a client holds for a file or folder between calls.
 * A handle binds the export it was given through and a catalogue node id
 * (which stays the same across renames and moves within a storage; a storage
 * root has no node, so its handle names the storage; a file still being
 * written after CREATE has none yet, so its handle names the pending file), sealed with an HMAC
 * keyed from the installation's secret key: a client cannot make or alter a
 * handle to reach something it was not given (BADHANDLE). 30 bytes, under
 * NFSv3's 64.
 *   byte 0 version · 1 kind · 2..5 export id · 6..13 node or storage id · 14..29 HMAC-SHA256 (truncated)
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { Nfs3, NfsError } from './errors';

const VERSION = 1;
const BODY = 14;
const MAC = 16;
export const HANDLE_BYTES = BODY + MAC;
/** NFSv3's limit on a handle's size (RFC 1813 NFS3_FHSIZE). */
export const FHSIZE = 64;
/** Handles whose HMAC was checked, kept by their bytes (a full set starts over). */
const VERIFIED_MAX = 4096;

/** `pending`: a file made by CREATE and not published yet (an id the gateway keeps in memory). */
export type HandleKind = 'storage' | 'node' | 'pending';
const KINDS: HandleKind[] = ['storage', 'node', 'pending'];

export interface HandleRef {
  exportId: number;
  kind: HandleKind;
  /** The storage id, the node id or the pending file's id. */
  id: number;
}

export class Handles {
  /** A key object, made once: a READDIRPLUS page makes hundreds of handles. */
  private key: KeyObject;
  /**
   * Handles already checked, by their bytes: a sequential client sends the
   * same handle with every READ, and its HMAC was a tenth of the gateway's
   * time per 1 MiB READ. Only bytes that passed the check are kept, and the
   * key never changes while the process runs, so an entry stays true.
   */
  private verified = new Map<string, HandleRef>();

  /** `secret`: the installation's secret key; a key for handles alone is derived from it. */
  constructor(secret: Buffer) {
    this.key = createSecretKey(createHmac('sha256', secret).update('nfs file handles').digest());
  }

  make(ref: HandleRef): Buffer {
    const h = Buffer.alloc(HANDLE_BYTES);
    h[0] = VERSION;
    h[1] = KINDS.indexOf(ref.kind);
    h.writeUInt32BE(ref.exportId, 2);
    h.writeBigUInt64BE(BigInt(ref.id), 6);
    this.mac(h.subarray(0, BODY)).copy(h, BODY);
    return h;
  }

  /** The reference in a handle; anything not made by `make` with this key → NfsError(BADHANDLE). */
  read(h: Buffer): Readonly<HandleRef> {
    if (h.length !== HANDLE_BYTES || h[0] !== VERSION || h[1] >= KINDS.length) throw new NfsError(Nfs3.BADHANDLE);
    const bytes = h.toString('latin1');
    const known = this.verified.get(bytes);
    if (known) return known;
    if (!timingSafeEqual(this.mac(h.subarray(0, BODY)), h.subarray(BODY))) throw new NfsError(Nfs3.BADHANDLE);
    const id = h.readBigUInt64BE(6);
    if (id > BigInt(Number.MAX_SAFE_INTEGER)) throw new NfsError(Nfs3.BADHANDLE);
    const ref = Object.freeze({ exportId: h.readUInt32BE(2), kind: KINDS[h[1]], id: Number(id) });
    if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
    this.verified.set(bytes, ref);
    return ref;
  }

  private mac(body: Buffer): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, MAC);
  }
}
