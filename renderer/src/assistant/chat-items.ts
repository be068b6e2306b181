/**
 * What the panel shows, as a list of items built from the stream's events
 * (or from a stored conversation): the person's messages, the model's
 * answers (text deltas joined), step cards, approval cards and errors.
 */
import type { ChatEvent, Conversation } from './assistant-api';

export type Item =
  | { kind: 'user'; text: string; paths: string[] }
  | { kind: 'answer'; text: string }
  | { kind: 'step'; id: string | null; tool: string; input: Record<string, unknown>; status: string; undo: boolean }
  | { kind: 'approval'; id: string; tool: string; input: Record<string, unknown>; reversible: boolean; decided?: 'approved' | 'rejected' }
  | { kind: 'error'; code: string; text: string }
  /** The turn stopped at a limit (`max_steps`, `max_tokens`, `budget`). */
  | { kind: 'stopped'; reason: 'max_steps' | 'max_tokens' | 'budget' };

/** The items after one event (a new array; `conversation` and `done` change none). */
export function applyEvent(items: Item[], ev: ChatEvent): Item[] {
  switch (ev.type) {
    case 'text': {
      const last = items[items.length - 1];
      if (last?.kind === 'answer') return [...items.slice(0, -1), { kind: 'answer', text: last.text + ev.delta }];
      return [...items, { kind: 'answer', text: ev.delta }];
    }
    case 'step': {
      // A decided approval card says how it was decided; the step card shows what happened.
      const decided = ev.status === 'rejected' ? 'rejected' : 'approved';
      const marked = items.map((it) => (it.kind === 'approval' && it.id === ev.step_id && !it.decided ? ({ ...it, decided } as Item) : it));
      return [...marked, { kind: 'step', id: ev.step_id, tool: ev.tool, input: ev.input ?? {}, status: ev.status, undo: !!ev.undo }];
    }
    case 'approval':
      return [...items, { kind: 'approval', id: ev.step_id, tool: ev.tool, input: ev.input ?? {}, reversible: ev.reversible }];
    case 'error':
      return [...items, { kind: 'error', code: ev.error, text: ev.message || ev.error }];
    case 'done':
      return ev.reason === 'end' || ev.reason === 'approval' ? items : [...items, { kind: 'stopped', reason: ev.reason }];
    default:
      return items;
  }
}

/** A step was undone: its card says so and offers no second undo. */
export const markUndone = (items: Item[], id: string): Item[] =>
  items.map((it) => (it.kind === 'step' && it.id === id ? { ...it, status: 'undone', undo: false } : it));

/** A stored conversation as items: its messages in order, then its steps (a waiting one as an approval card). */
export function fromConversation(c: Conversation): Item[] {
  const out: Item[] = [];
  for (const m of c.messages) {
    if (m.role === 'user') out.push({ kind: 'user', text: m.content, paths: [] });
    else if (m.role === 'assistant' && m.text) out.push({ kind: 'answer', text: m.text });
  }
  for (const s of c.steps) {
    if (s.status === 'pending') out.push({ kind: 'approval', id: s.id, tool: s.tool, input: s.input, reversible: false });
    else out.push({ kind: 'step', id: s.id, tool: s.tool, input: s.input, status: s.status, undo: !!s.undo });
  }
  return out;
}

/** One line naming what a tool call touches: its paths (or link id), for the cards. */
export function summary(input: Record<string, unknown>): string {
  const v = (k: string) => (typeof input[k] === 'string' ? (input[k] as string) : '');
  if (v('from') && v('to')) return `${v('from')} → ${v('to')}`;
  if (v('path') && v('name')) return `${v('path')} → ${v('name')}`;
  if (v('path') && v('dest')) return `${v('path')} → ${v('dest')}`;
  return v('path') || v('query') || v('id');
}
