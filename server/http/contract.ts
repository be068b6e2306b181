/**
 * Wire types shared with the renderer and the desktop shell (they may import
 * types from here and nothing else from server/).
 */
export type { FileEntry } from '../files/entry';
export interface Capabilities {
  version: string;
  thumbs: { enabled: boolean; image: boolean; video: boolean; pdf: boolean; office: boolean; audio: boolean; svg: boolean; imagemagick: boolean };
  external: { docserver_url: string; diagram_url: string; text_diagram: boolean };
  auth: { drivers: string[]; allow_signup: boolean };
  limits: { max_upload_bytes: number; max_archive_bytes: number; max_chunk_bytes: number };
  storage_drivers: string[];
  antivirus: boolean;
  antivirus_mode: 'binary' | 'daemon';
  share_max_ttl_days: number;
  newdoc_types: Array<{ ext: string; group: string; mime: string; requires: '' | 'docserver' | 'diagram' }>;
  app_plugins: { enabled: boolean };
  assistant: { state: string; permitted: boolean; button: boolean };
}

export interface ApiErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
  params?: Record<string, unknown>;
}
