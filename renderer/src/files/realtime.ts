/**
 * Server-Sent Events for the open folder: `change` frames when another client
 * writes there, `op` frames for the caller's operations. The stream is re-opened
 * whenever the folder changes; EventSource itself reconnects after a drop.
 */
import { useEffect, useRef } from 'react';
import { withQuery } from '../api/client';
import type { Operation } from '../api/types';
import { openEventStream } from '../device/event-stream';

export interface ChangeFrame {
  folder: string;
  kind: 'created' | 'updated' | 'deleted' | 'moved';
  path: string;
  name: string;
}

interface Handlers {
  onChange: (c: ChangeFrame) => void;
  onOp: (op: Operation) => void;
  /** Called after a reconnect: frames may have been missed, so the folder should be re-read. */
  onReconnect: () => void;
}

export function useFolderEvents(folder: string, handlers: Handlers): void {
  const h = useRef(handlers);
  h.current = handlers;
  useEffect(() => {
    if (typeof EventSource === 'undefined') return;
    const url = withQuery('/api/events/stream', { folder });
    const es = openEventStream(url);
    let opened = false;
    const parse = <T>(ev: Event): T | null => {
      try {
        return JSON.parse((ev as MessageEvent<string>).data) as T;
      } catch {
        return null;
      }
    };
    es.addEventListener('open', () => {
      if (opened) h.current.onReconnect();
      opened = true;
    });
    es.addEventListener('change', (ev) => {
      const c = parse<ChangeFrame>(ev);
      if (c) h.current.onChange(c);
    });
    es.addEventListener('op', (ev) => {
      const o = parse<{ op: Operation }>(ev);
      if (o?.op) h.current.onOp(o.op);
    });
    return () => es.close();
  }, [folder]);
}
