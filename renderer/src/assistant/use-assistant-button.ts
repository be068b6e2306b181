/**
 * Rule 7: the assistant button shows only where the server's capabilities say `assistant.button` for this caller.
 * An admin of a server whose assistant is off or has no provider gets `setup` instead: a pointer to
 * Admin → Assistant (issue 39, 19), never the panel; everyone else sees neither.
 */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import type { Capabilities } from '../api/types';

export function useAssistantButton(admin: boolean): { button: boolean; setup: boolean } {
  const [state, setState] = useState({ button: false, setup: false });
  useEffect(() => {
    let live = true;
    // Fresh: an admin may just have switched the assistant on or hidden its button.
    api<Capabilities>('/api/capabilities', { cache: 'no-cache' }).then(
      (c) => live && setState({ button: !!c.assistant?.button, setup: admin && !c.assistant?.button && c.assistant?.state !== 'ready' }),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [admin]);
  return state;
}
