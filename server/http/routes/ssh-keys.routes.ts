/**
 * A person's SSH public keys for the SFTP gateway: `GET/POST
 * /api/auth/ssh-keys`, `DELETE /api/auth/ssh-keys/:id`. Session only (an API
 * key cannot add a way in): the key-scope table does not list these routes.
 * See docs/gateways-sftp.md.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { SshKeys } from '../../auth/ssh-keys';
import { readObject } from '../middlewares/body';
import { requireUser } from '../middlewares/auth';
import { validate, z } from '../validate';
import { me, reqMeta, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Auth: keys and sessions', 'user');

const newKey = z.strictObject({
  name: z.string().trim().max(100).optional(),
  public_key: z.string().min(1).max(16_384),
});

export function sshKeyRoutes(d: { sshKeys: SshKeys; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>();

  r.get('/api/auth/ssh-keys', doc({ summary: 'My SSH public keys (SFTP sign-in)' }), requireUser, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { keys: await d.sshKeys.list(me(ctx), me(ctx).id) };
  });

  r.post('/api/auth/ssh-keys', doc({ summary: 'Add an SSH public key', body: newKey }), requireUser, async (ctx) => {
    const b = validate(newKey, await readObject(ctx, d.maxJsonBytes));
    const key = await d.sshKeys.add(me(ctx), me(ctx).id, { name: b.name, publicKey: b.public_key }, reqMeta(ctx));
    ctx.status = 201;
    ctx.body = { key };
  });

  r.delete('/api/auth/ssh-keys/:id', doc({ summary: 'Remove an SSH public key' }), requireUser, async (ctx) => {
    const raw = ctx.params.id ?? '';
    if (!/^\d{1,12}$/.test(raw) || Number(raw) <= 0) throw new AppError('bad_id');
    await d.sshKeys.remove(me(ctx), me(ctx).id, Number(raw), reqMeta(ctx));
    ctx.body = { ok: true };
  });

  return r;
}
