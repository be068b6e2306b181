/** People with a vault the caller may share an encrypted folder with (`GET /api/vault/people?q=`). */
import { api } from '../api/client';

export interface VaultPerson {
  id: number;
  name: string;
  display_name?: string | null;
  /** Always on `GET /api/vault/people`; a folder's member list carries none. */
  public_key?: string;
}

export const findVaultPeople = async (q: string): Promise<VaultPerson[]> =>
  (await api<{ people: VaultPerson[] }>('/api/vault/people', { query: { q } })).people;
