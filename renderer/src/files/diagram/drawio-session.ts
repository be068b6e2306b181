/**
 * One diagram editing session over draw.io's embed protocol (`proto=json`:
 * JSON strings through postMessage). No React here, so it is tested in Node.
 *
 *   editor → us: init, load, autosave {xml}, save {xml, exit?}, export {data, xml}, exit
 *   us → editor: load {xml | xmlpng}, export {format, xml}, status
 *
 * Messages count only when they come from the editor frame AND from the
 * configured editor's origin: a frame navigated elsewhere, or any other
 * window, cannot pass off a save. Autosaves are written at most once per
 * `autosaveMs` (each write keeps a version, so one per keystroke would flood
 * the history); save and exit write at once. For .drawio.svg / .drawio.png
 * the stored bytes are the editor's export, which embeds the diagram.
 */
import type { DiagramFormat } from './diagram-route';

export type { DiagramFormat };

/** The editor's address in embed mode, keeping any query the admin configured. */
export function editorUrl(base: string, lang: string): string {
  const u = new URL(base);
  for (const [k, v] of Object.entries({ embed: '1', proto: 'json', spin: '1', libraries: '1', saveAndExit: '1', lang })) u.searchParams.set(k, v);
  return u.toString();
}

/** The bytes of a base64 data URI. */
export function dataUriBytes(uri: string): Uint8Array {
  const bin = atob(uri.slice(uri.indexOf(',') + 1));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** What the session writes: text through save-text, bytes through the upload route. */
export type DiagramWrite = { text: string } | { bytes: Uint8Array };

export interface SessionIO {
  /** Posts a message to the editor frame. */
  post(msg: Record<string, unknown>): void;
  write(w: DiagramWrite): Promise<void>;
  /** The editor asked to leave (after any pending write). */
  exit(): void;
  status(s: 'saving' | 'saved' | { error: unknown }): void;
}

export interface SessionOptions {
  /** Origin of the configured editor URL. */
  origin: string;
  format: DiagramFormat;
  title: string;
  /** What the file holds: the XML (for .svg: its embedded XML), or for .png a data URI of the file ('' when empty). */
  content: string;
  io: SessionIO;
  autosaveMs?: number;
  exportTimeoutMs?: number;
}

export class DrawioSession {
  private pending: string | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private exported: { resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void } | null = null;
  private leaving = false;

  constructor(private o: SessionOptions) {}

  /** Handles a window message; returns false when it was ignored (wrong frame or origin, not ours). */
  handle(e: { origin: string; source: unknown; data: unknown }, frame: unknown): boolean {
    if (e.source !== frame || e.origin !== this.o.origin || typeof e.data !== 'string') return false;
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(e.data) as Record<string, unknown>;
    } catch {
      return false;
    }
    if (!msg || typeof msg !== 'object') return false;
    const xml = typeof msg.xml === 'string' ? msg.xml : null;
    switch (msg.event) {
      case 'init':
        this.o.io.post(this.loadMessage());
        break;
      case 'autosave':
        if (xml !== null) this.queue(xml, false);
        break;
      case 'save':
        if (xml !== null) this.queue(xml, true);
        if (msg.exit) void this.leave();
        break;
      case 'export':
        this.exported?.resolve(msg);
        this.exported = null;
        break;
      case 'exit':
        void this.leave();
        break;
      default:
        return msg.event === 'load' || msg.event === 'configure';
    }
    return true;
  }

  /** Writes what is still pending (before leaving the page). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const xml = this.pending;
    this.pending = null;
    if (xml !== null) this.chain = this.chain.then(() => this.write(xml));
    return this.chain;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.exported?.reject(new Error('closed'));
  }

  private loadMessage(): Record<string, unknown> {
    const { format, content, title } = this.o;
    const data = format === 'xmlpng' && content ? { xmlpng: content } : { xml: format === 'xmlpng' ? '' : content };
    return { action: 'load', autosave: 1, modified: 'unsavedChanges', saveAndExit: '1', title, ...data };
  }

  private queue(xml: string, now: boolean): void {
    this.pending = xml;
    if (now) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.o.autosaveMs ?? 5000);
  }

  private async leave(): Promise<void> {
    if (this.leaving) return;
    this.leaving = true;
    await this.flush().catch(() => {});
    this.o.io.exit();
  }

  private async write(xml: string): Promise<void> {
    const { io, format } = this.o;
    io.status('saving');
    try {
      if (format === 'xml') await io.write({ text: xml });
      else {
        const msg = await this.export(xml);
        if (typeof msg.data !== 'string' || !msg.data.startsWith('data:')) throw new Error(String(msg.error ?? 'the editor sent no image'));
        const bytes = dataUriBytes(msg.data);
        await io.write(format === 'xmlsvg' ? { text: new TextDecoder().decode(bytes) } : { bytes });
      }
      io.post({ action: 'status', messageKey: 'allChangesSaved', modified: false });
      io.status('saved');
    } catch (e) {
      io.status({ error: e });
    }
  }

  /** Asks the editor for the image of `xml` (one export at a time: writes are chained). */
  private export(xml: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('the editor did not export the image')), this.o.exportTimeoutMs ?? 30_000);
      this.exported = {
        resolve: (m) => (clearTimeout(t), resolve(m)),
        reject: (e) => (clearTimeout(t), reject(e)),
      };
      this.o.io.post({ action: 'export', format: this.o.format, xml, spinKey: 'saving' });
    });
  }
}
