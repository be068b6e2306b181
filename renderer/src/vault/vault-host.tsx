/**
 * Mounted once in the signed-in shell: tells the vault store who is signed in,
 * shows the unlock dialog when something asks for the keys, locks after
 * IDLE_MS without a key press or pointer, and forgets the keys on sign-out
 * (the shell unmounts).
 */
import { useEffect } from 'react';
import { useSession } from '../auth/session';
import { UnlockDialog } from './unlock-dialog';
import { lockIfIdle, setVaultUser, touch, useUnlockRequested } from './vault-store';

const CHECK_MS = 30_000;

export function VaultHost() {
  const { user } = useSession();
  const asking = useUnlockRequested();
  useEffect(() => {
    setVaultUser(user.id);
    const active = () => touch();
    const opts = { capture: true, passive: true };
    for (const ev of ['pointerdown', 'keydown', 'wheel']) window.addEventListener(ev, active, opts);
    const timer = setInterval(() => lockIfIdle(), CHECK_MS);
    return () => {
      for (const ev of ['pointerdown', 'keydown', 'wheel']) window.removeEventListener(ev, active, opts);
      clearInterval(timer);
      setVaultUser(null);
    };
  }, [user.id]);
  return asking ? <UnlockDialog /> : null;
}
