/** `POST /api/files/upload/init`. */
export interface UploadSession {
  upload_id: string;
  presigned_urls: Array<{ part: number; url: string; expires_at: string }> | null;
  expires_at: string;
  chunk_size: number;
}

/** `GET /api/files/upload/status`: the parts held, so a client resumes. */
export interface UploadStatus {
  upload_id: string;
  path: string;
  size: number;
  chunk_size: number;
  parts: Array<{ part: number; size: number; etag: string }>;
  expires_at: string;
}

/** A published upload (single upload, finalize). */
export interface Published {
  id: number;
  path: string;
  size: number;
  etag: string;
}
