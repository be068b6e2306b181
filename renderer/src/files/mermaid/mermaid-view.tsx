/**
 * A Mermaid diagram (a `.mmd` file, a ```mermaid block in Markdown), drawn
 * inside a frame sandboxed with `allow-scripts` only (mermaid-frame.html):
 * mermaid parses untrusted text and builds markup from it, so it runs in an
 * opaque origin that can reach nothing of ours, and at `securityLevel:
 * 'strict'` besides. The frame says when it is ready, gets the text, and
 * answers with the drawing's height (or the parser's error).
 */
import { useEffect, useRef, useState } from 'react';
import { useI18n } from '../../i18n';

export const MERMAID_FRAME = '/mermaid-frame.html';

export default function MermaidView({ text }: { text: string }) {
  const { t } = useI18n();
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState(0);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const onMessage = (e: MessageEvent) => {
      // The sandboxed frame's origin is opaque ('null'): it is known by its window.
      if (e.source !== frame.current?.contentWindow || e.origin !== 'null') return;
      const msg = e.data as { type?: string; height?: number; message?: string };
      if (msg?.type === 'ready') frame.current!.contentWindow!.postMessage({ type: 'render', text }, '*');
      else if (msg?.type === 'rendered') {
        setError(null);
        setHeight(Math.min(Math.max(Number(msg.height) || 0, 80), 4000));
      } else if (msg?.type === 'error') setError(String(msg.message ?? ''));
    };
    window.addEventListener('message', onMessage);
    // A new text for a frame that is already up: draw it again.
    frame.current?.contentWindow?.postMessage({ type: 'render', text }, '*');
    return () => window.removeEventListener('message', onMessage);
  }, [text]);

  return (
    <div className="mermaid-view" data-testid="mermaid">
      {error && (
        <p className="error" role="alert">
          {t('mermaid.error', { message: error })}
        </p>
      )}
      <iframe
        ref={frame}
        className="mermaid-frame"
        sandbox="allow-scripts"
        src={MERMAID_FRAME}
        title={t('mermaid.frame')}
        style={height ? { height } : undefined}
      />
    </div>
  );
}
