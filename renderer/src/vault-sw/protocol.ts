/** The messages between a page and the vault's stream worker (sw.ts; the page side is vault/vault-stream.ts). */

/** One file as the worker reads it: where its ciphertext is, how to ask for it, its content key. */
export interface StreamSource {
  /** Same-origin URL of the ciphertext (the raw route, or a link's download address). */
  url: string;
  /** Sent with every fetch (a paired device's key); forgotten with the file. */
  headers: Record<string, string>;
  credentials: RequestCredentials;
  cipherTotal: number;
  /** The file's content key, 32 bytes: the only key the worker ever sees. */
  contentKey: ArrayBuffer;
  /** The true name and the type it is served as. */
  name: string;
  type: string;
  /** `download`: one attachment, then forgotten; `media`: a player page and ranges until forgotten. */
  mode: 'download' | 'media';
}

export type ToWorker = { type: 'add'; id: string; source: StreamSource } | { type: 'keep'; id: string } | { type: 'forget'; id: string };

/** `started`: a download's answer (its headers) went to the browser, which hands it to its download manager. */
export type WorkerNews =
  | { type: 'added' }
  | { type: 'started' }
  | { type: 'done' }
  | { type: 'error'; code: 'integrity' | 'refused' | 'failed'; status?: number; message: string };
