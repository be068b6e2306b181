/**
 * A software WebAuthn authenticator for HTTP tests (the browser tests use
 * Chromium's virtual authenticator instead): an ES256 key per credential,
 * "none" attestation, a signature counter, and the browser's part (client
 * data with the page's origin). It answers options the way
 * `@simplewebauthn/browser` would hand them to the server.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64u = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

export interface SoftCredential {
  id: Buffer;
  key: KeyObject;
  rpId: string;
  counter: number;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** `origin` is the page the "browser" shows; `rpId` defaults to the options' `rp.id`. */
  constructor(private origin: string) {}

  /** Answers `navigator.credentials.create({publicKey: options})`. */
  create(options: { challenge: string; rp: { id?: string } }, o: { origin?: string; rpId?: string } = {}): Record<string, unknown> {
    const rpId = o.rpId ?? options.rp.id!;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = randomBytes(16);
    const len = Buffer.alloc(2);
    len.writeUInt16BE(id.length);
    const authData = Buffer.concat([sha256(rpId), Buffer.from([0x45]), u32(0), Buffer.alloc(16), len, id, Buffer.from(cose)]);
    const attestation = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', authData],
      ]),
    );
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: o.origin ?? this.origin, crossOrigin: false });
    this.credentials.push({ id, key: privateKey, rpId, counter: 0 });
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON: b64u(clientData), attestationObject: b64u(attestation), transports: ['internal'] },
    };
  }

  /** Answers `navigator.credentials.get({publicKey: options})` with `cred` (default: the first allowed one held). */
  get(
    options: { challenge: string; rpId?: string; allowCredentials?: Array<{ id: string }> },
    o: { origin?: string; cred?: SoftCredential; counter?: number } = {},
  ): Record<string, unknown> {
    const allowed = new Set((options.allowCredentials ?? []).map((c) => c.id));
    const cred = o.cred ?? this.credentials.find((c) => allowed.has(b64u(c.id)));
    if (!cred) throw new Error('no allowed credential held');
    cred.counter = o.counter ?? cred.counter + 1;
    const authData = Buffer.concat([sha256(options.rpId ?? cred.rpId), Buffer.from([0x05]), u32(cred.counter)]);
    const clientData = JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: o.origin ?? this.origin, crossOrigin: false });
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), cred.key);
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature) },
    };
  }
}
