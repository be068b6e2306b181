/**
 * The vault and encrypted folders (docs/vault.md, "Server"): `/api/vault...`. Session only (the key-scope
 * table lists them so): an API key neither manages a vault nor changes who holds a folder's keys. Every
 * key, proof and wrapped key is checked for its `b64u` shape and size here; the server never opens one.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { MAX_THUMB_BYTES, type VaultService } from '../../vault';
import { personActor } from '../../auth';
import { readObject } from '../middlewares/body';
import { requireUser } from '../middlewares/auth';
import { validate, z } from '../validate';
import { me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Vault', 'user');

/** `b64u` (base64url, no padding) of exactly `bytes` bytes, or of `min`..`max` bytes. */
const b64u = (min: number, max = min) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/, 'not base64url')
    .refine((s) => s.length % 4 !== 1 && Buffer.from(s, 'base64url').length >= min && Buffer.from(s, 'base64url').length <= max, {
      message: min === max ? `must be ${min} bytes` : `must be ${min} to ${max} bytes`,
    });

/** A proof (`auth`), 32 bytes; a P-256 public key, raw (65 bytes); a wrapped private key (PKCS#8 under AES-GCM). */
const proof = b64u(32);
const publicKey = b64u(65);
const wrappedPrivate = b64u(60, 512);
/** ECIES: ephemeral public key (65) || nonce (12) || the 32-byte key under AES-GCM (48). */
const wrappedFolderKey = b64u(125);

/** The KDF's parameters, within what the browser module accepts (docs/vault.md, "Details"). */
const kdf = z
  .strictObject({
    alg: z.literal('argon2id'),
    m: z
      .number()
      .int()
      .max(4 * 1024 * 1024),
    t: z.number().int().min(1).max(64),
    p: z.number().int().min(1).max(16),
    salt: b64u(8, 64),
  })
  .refine((k) => k.m >= 8 * k.p, { message: 'm must be at least 8 KiB per lane', path: ['m'] });

const createBody = z.strictObject({
  kdf,
  public_key: publicKey,
  wrapped_private_key: wrappedPrivate,
  recovery_wrapped_private_key: wrappedPrivate,
  auth: proof,
  recovery_auth: proof,
});
const passphraseBody = z.strictObject({ auth: proof, kdf, wrapped_private_key: wrappedPrivate, new_auth: proof });
const recoverBody = z.strictObject({ recovery_auth: proof, kdf, wrapped_private_key: wrappedPrivate, new_auth: proof });
const peopleQuery = z.object({ q: z.string().max(100).optional() });
const folderBody = z.strictObject({ path: z.string().min(1).max(4096) });
const idParams = z.object({ id: z.string().regex(/^\d{1,12}$/) });
const membersBody = z.strictObject({
  key_version: z.number().int().min(1).max(65_535),
  members: z
    .array(z.strictObject({ user_id: z.number().int().min(1), wrapped_key: wrappedFolderKey }))
    .min(1)
    .max(1000),
});
const thumbQuery = z.object({ path: z.string().min(1).max(4096) });

/** The route's body as bytes, at most `max` (`payload_too_large` beyond). */
async function readBytes(ctx: Ctx, max: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > max) throw new AppError('payload_too_large', { max }, { max });
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new AppError('payload_too_large', { max }, { max });
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

export function vaultRoutes(d: { vault: VaultService; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>();
  const person = (ctx: Ctx) => personActor(me(ctx), reqMeta(ctx));

  r.get('/api/vault', doc({ summary: 'My vault (null until set up)' }), requireUser, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { vault: await d.vault.get(me(ctx)) };
  });

  r.put('/api/vault', doc({ summary: 'Set up my vault', body: createBody, status: 201 }), requireUser, async (ctx) => {
    const b = validate(createBody, await readObject(ctx, d.maxJsonBytes));
    ctx.status = 201;
    ctx.body = { vault: await d.vault.create(me(ctx), b) };
  });

  r.post(
    '/api/vault/passphrase',
    doc({ summary: 'Change my vault passphrase (proved by the old one)', body: passphraseBody, status: 204 }),
    requireUser,
    async (ctx) => {
      const b = validate(passphraseBody, await readObject(ctx, d.maxJsonBytes));
      await d.vault.rewrap(me(ctx), ctx.state.ip, b, false);
      ctx.status = 204;
    },
  );

  r.post(
    '/api/vault/recover',
    doc({ summary: 'Set a new vault passphrase with the recovery key', body: recoverBody, status: 204 }),
    requireUser,
    async (ctx) => {
      const b = validate(recoverBody, await readObject(ctx, d.maxJsonBytes));
      await d.vault.rewrap(me(ctx), ctx.state.ip, { ...b, auth: b.recovery_auth }, true);
      ctx.status = 204;
    },
  );

  r.get('/api/vault/people', doc({ summary: 'People with a vault to share an encrypted folder with', query: peopleQuery }), requireUser, async (ctx) => {
    const qy = validate(peopleQuery, ctx.query);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { people: await d.vault.people(me(ctx), qy.q ?? '') };
  });

  r.post('/api/vault/folders', doc({ summary: 'Make an encrypted folder', body: folderBody, status: 201 }), requireUser, async (ctx) => {
    const b = validate(folderBody, await readObject(ctx, d.maxJsonBytes));
    ctx.status = 201;
    ctx.body = { folder: await d.vault.createFolder(person(ctx), b.path) };
  });

  r.get('/api/vault/folders', doc({ summary: 'My encrypted folders with my wrapped keys' }), requireUser, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { folders: await d.vault.folders(me(ctx)) };
  });

  r.get('/api/vault/folders/:id', doc({ summary: 'One encrypted folder (members only)', params: idParams }), requireUser, async (ctx) => {
    const p = validate(idParams, ctx.params);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { folder: await d.vault.folder(me(ctx), Number(p.id)) };
  });

  r.put(
    '/api/vault/folders/:id/members',
    doc({ summary: "Replace an encrypted folder's members with a new key version (owner only)", params: idParams, body: membersBody }),
    requireUser,
    async (ctx) => {
      const p = validate(idParams, ctx.params);
      const b = validate(membersBody, await readObject(ctx, d.maxJsonBytes));
      ctx.body = { folder: await d.vault.setMembers(me(ctx), Number(p.id), b) };
    },
  );

  r.put(
    '/api/vault/thumb',
    doc({ summary: "Store a file's encrypted thumbnail (FDV1, at most 256 KiB)", query: thumbQuery, consumes: 'application/octet-stream', status: 204 }),
    requireUser,
    async (ctx) => {
      const qy = validate(thumbQuery, ctx.query);
      await d.vault.putThumb(person(ctx), qy.path, await readBytes(ctx, MAX_THUMB_BYTES));
      ctx.status = 204;
    },
  );

  r.get(
    '/api/vault/thumb',
    doc({ summary: "A file's encrypted thumbnail", query: thumbQuery, produces: ['application/octet-stream'] }),
    requireUser,
    async (ctx) => {
      const qy = validate(thumbQuery, ctx.query);
      const bytes = await d.vault.thumb(person(ctx), qy.path);
      ctx.set('Cache-Control', 'private, no-store');
      ctx.type = 'application/octet-stream';
      ctx.body = bytes;
    },
  );

  return r;
}
