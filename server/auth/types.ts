import type { Role, UserView } from '../contract';

export type { Role, UserView };
export const ROLES: readonly Role[] = ['admin', 'user', 'viewer'];

/** The signed-in caller as every domain module sees it. */
export interface Principal {
  id: number;
  email: string;
  username: string;
  role: Role;
  groups: string[];
  language: string | null;
  sessionId: string;
}

