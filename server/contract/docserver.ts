/** The document editor's wire shapes (docs/docserver.md). */

/** `GET /api/files/docserver/config?path=`: what the editor page hands to the document server's `DocsAPI.DocEditor`. */
export interface DocserverEditor {
  /** The document server's base URL (as browsers reach it). */
  docserver_url: string;
  /** Its editor script, `<docserver_url>/web-apps/apps/api/documents/api.js`. */
  api_url: string;
  node_id: number;
  /** Whether the caller may edit (otherwise the editor opens in view mode). */
  edit: boolean;
  /** The editor config with its HS256 `token` (payload: the config itself). */
  config: Record<string, unknown> & { token: string };
}

/** `POST /api/admin/external/:name/test` (spec: `{healthy, version, latency_ms}`; the rest is ours). */
export interface ExternalTestReport {
  healthy: boolean;
  version: string | null;
  latency_ms: number;
  /** Why the probe failed, when it did. */
  error?: string;
  /**
   * Rule 6's second leg (document server only): whether the document server
   * fetched a one-shot probe URL from this service (`unmeasured`: it refused
   * our signature, or could not be asked).
   */
  fetch_probe?: 'reached' | 'not_reached' | 'unmeasured';
  /** The base URL the document server was asked to reach (callback URL, public URL, or this request's). */
  callback_base?: string;
}
