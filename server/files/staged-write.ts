/**
 * A file written in parts over several requests (the resumable upload
 * protocol, file-request drops): the one door whose bytes arrive before the
 * write is decided. `ActorFiles.staged()` checks the actor's access once per
 * call; this face then reaches the storage's multipart capability, keeps a
 * version, publishes the whole bytes and announces them in the write gate —
 * the same steps `ActorFiles.write` takes in one go.
 */
import type { Readable } from 'node:stream';
import { actorRef, type Actor } from '../auth';
import type { GateNode, WriteContext } from '../catalogue';
import type { Entry, WriteOptions } from '../storage';
import type { Target } from './access';
import type { FileService } from './file-service';

export class StagedWrite {
  /** `shown`: the UI path refusals name. */
  constructor(
    readonly target: Target,
    private actor: Actor,
    private svc: FileService,
    private shown: string,
  ) {}

  /** The storage's own multipart capability, or null (the parts are then staged in the data folder). */
  multipart() {
    return this.svc.ops.multipart(this.target.storage.id);
  }

  /** The item now at the target, or null when there is none. */
  statOrNull(): Promise<Entry | null> {
    return this.svc.ops.statOrNull(this.target.place);
  }

  /** Keeps the bytes a publish is about to replace (no-op without protection or without a file there). */
  async keepVersion(): Promise<void> {
    await this.svc.ports.versions?.snapshotBeforeOverwrite(this.target.place, actorRef(this.actor));
  }

  /** Whether the catalogue knows an item at the target now: asked before publishing (WriteContext.created). */
  catalogued(): Promise<boolean> {
    return this.svc.catalogued(this.target.place);
  }

  /**
   * Writes the whole file atomically from `body`; announces nothing (see `announce`). Inside an encrypted
   * folder the stage's first bytes must be an FDV1 header (`not_encrypted`, and nothing is published).
   */
  put(body: Readable, o: WriteOptions): Promise<Entry> {
    return this.svc.ops.write(this.target.place, this.svc.encrypted.guard(this.target.place, body, this.shown), o);
  }

  /**
   * A part's body on its way to the storage's own multipart upload (published by `complete`, never read back
   * here): inside an encrypted folder the first part must start with an FDV1 header.
   */
  part(part: number, body: Readable): Readable {
    return part === 1 ? this.svc.encrypted.guard(this.target.place, body, this.shown) : body;
  }

  /** The write gate, once the bytes are published: node row, events, realtime frame, audit, hooks. */
  announce(entry: Entry, ctx: WriteContext): Promise<GateNode> {
    return this.svc.ops.written(this.target.place, entry, ctx);
  }
}
