/** The signed-in person, shared by every screen. */
import { createContext, useContext } from 'react';
import type { User } from '../api/types';

export interface Session {
  user: User;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

/** The session; only called below the signed-in shell, where it always exists. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside the signed-in shell');
  return s;
}
