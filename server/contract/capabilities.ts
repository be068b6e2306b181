/** `GET /api/capabilities` (spec: Capabilities object; `limits.max_chunk_bytes` is ours). */
export interface Capabilities {
  version: string;
  thumbs: { enabled: boolean; image: boolean; video: boolean; pdf: boolean; office: boolean; audio: boolean; svg: boolean; imagemagick: boolean };
  external: { docserver_url: string; diagram_url: string; text_diagram: boolean };
  /** `oidc_label`: the sign-in button's name, present when `drivers` has `oidc`. */
  auth: { drivers: string[]; allow_signup: boolean; oidc_label?: string };
  limits: { max_upload_bytes: number; max_archive_bytes: number; max_chunk_bytes: number };
  storage_drivers: string[];
  antivirus: boolean;
  antivirus_mode: 'binary' | 'daemon';
  share_max_ttl_days: number;
  newdoc_types: NewdocType[];
  app_plugins: { enabled: boolean };
  assistant: { state: string; permitted: boolean; button: boolean };
}

export interface NewdocType {
  ext: string;
  group: string;
  mime: string;
  requires: '' | 'docserver' | 'diagram';
}
