/** Rule 7: the assistant button shows only where the server's capabilities say `assistant.button` for this caller. */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import type { Capabilities } from '../api/types';

export function useAssistantButton(): boolean {
  const [on, setOn] = useState(false);
  useEffect(() => {
    let live = true;
    // Fresh: an admin may just have switched the assistant on or hidden its button.
    api<Capabilities>('/api/capabilities', { cache: 'no-cache' }).then((c) => live && setOn(!!c.assistant?.button), () => {});
    return () => {
      live = false;
    };
  }, []);
  return on;
}
