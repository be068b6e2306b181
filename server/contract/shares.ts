export interface DropSettings {
  max_files: number;
  max_file_size_mb: number;
  allowed_ext: string[];
  ask_name: boolean;
}

export type ShareState = 'active' | 'expired' | 'revoked' | 'capped' | 'suspended';

/** A link as its owner sees it (`GET /api/files/share`, create and revoke answers). */
export interface ShareView {
  id: number;
  /** `app`: a public page an app opened (docs/app-plugins.md, "Public app pages"). */
  kind: 'link' | 'drop' | 'app';
  path: string;
  token: string;
  url: string;
  ttl: string | null;
  expires_at: string | null;
  expiry_clamped: boolean;
  max_downloads: number | null;
  downloads: number;
  max_uploads: number | null;
  uploads: number;
  /** File requests: submissions that received at least one file (a visit sending three files is one use). `uploads` counts files against `max_uploads`. */
  submissions?: number;
  requires_pin: boolean;
  comment: string | null;
  drop_settings: DropSettings | null;
  created_at: string;
  revoked_at: string | null;
  /** Set while the uplink guard holds the link suspended (`addresses` or `accelerator`); the owner or an admin re-enables it. */
  suspended_at: string | null;
  suspended_reason: string | null;
  state: ShareState;
  /** On links opened by an app: the app, the view the page shows, its title. */
  plugin_name?: string;
  page_id?: string;
  title?: string | null;
  /** A link to a file inside an encrypted folder (docs/vault.md): the page decrypts with the key in the URL's `#k=`. */
  encrypted?: boolean;
}

/** `POST /api/files/share`: the link, plus the PIN once when the server generated it. */
export type ShareCreated = ShareView & { pin?: string };

/** `GET /api/files/share/{token}` (no PIN needed). */
export interface LinkMetadata {
  kind: 'link' | 'drop' | 'app';
  requires_pin: boolean;
  expires_at: string | null;
  download_count: number;
  max_downloads: number | null;
  downloads_remaining: number | null;
  filename: string;
  size: number;
  mime: string;
  is_directory: boolean;
  drop_settings?: DropSettings;
  /** A file inside an encrypted folder: `filename` is empty (the stored name is ciphertext) and `size` the ciphertext's. */
  encrypted?: boolean;
}
