/**
 * Inside the sandboxed Mermaid frame (renderer/mermaid-frame.html): waits for
 * `{type: 'render', text}` from the app, draws it with mermaid (loaded on
 * first use, its own chunks) at `securityLevel: 'strict'` (labels sanitised,
 * no click handlers), and answers `{type: 'rendered', height}` or
 * `{type: 'error', message}`. Only the parent window is listened to.
 */
const out = document.getElementById('out')!;
let seq = 0;

async function render(text: string): Promise<number> {
  const { default: mermaid } = await import('mermaid');
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: 'default' });
  const { svg } = await mermaid.render(`diagram-${++seq}`, text);
  out.innerHTML = svg;
  // The drawing's own height: the document's would be at least the frame's.
  return Math.ceil(out.getBoundingClientRect().height);
}

window.addEventListener('message', (e) => {
  const msg = e.data as { type?: string; text?: unknown };
  if (e.source !== parent || msg?.type !== 'render' || typeof msg.text !== 'string') return;
  render(msg.text).then(
    (height) => parent.postMessage({ type: 'rendered', height }, '*'),
    (err: unknown) => {
      out.textContent = '';
      parent.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) }, '*');
    },
  );
});
parent.postMessage({ type: 'ready' }, '*');
