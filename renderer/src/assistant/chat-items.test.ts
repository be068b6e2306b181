import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEvent, fromConversation, markUndone, summary, type Item } from './chat-items';
import type { ChatEvent } from './assistant-api';

const run = (evs: ChatEvent[], start: Item[] = []) => evs.reduce(applyEvent, start);

test('text deltas join into one answer until a step comes between', () => {
  const items = run([
    { type: 'conversation', id: 'c', title: 't' },
    { type: 'text', delta: 'Mov' },
    { type: 'text', delta: 'ing.' },
    { type: 'step', step_id: 's1', tool: 'move', input: { from: '/home/a', to: '/home/b' }, status: 'done', undo: true },
    { type: 'text', delta: 'Done.' },
    { type: 'done', reason: 'end', conversation: { id: 'c', title: 't' } },
  ]);
  assert.deepEqual(
    items.map((i) => i.kind),
    ['answer', 'step', 'answer'],
  );
  assert.equal((items[0] as { text: string }).text, 'Moving.');
  const undone = markUndone(items, 's1')[1];
  assert.deepEqual([undone.kind === 'step' && undone.status, undone.kind === 'step' && undone.undo], ['undone', false]);
});

test('an approval card is marked by the step that decides it', () => {
  const start = run([{ type: 'approval', step_id: 's2', tool: 'create_share_link', input: { path: '/home/a' }, reversible: false }]);
  const ok = run([{ type: 'step', step_id: 's2', tool: 'create_share_link', input: { path: '/home/a' }, status: 'done' }], start);
  assert.equal(ok[0].kind === 'approval' && ok[0].decided, 'approved');
  const no = run([{ type: 'step', step_id: 's2', tool: 'create_share_link', input: { path: '/home/a' }, status: 'rejected' }], start);
  assert.equal(no[0].kind === 'approval' && no[0].decided, 'rejected');
  const err = run([{ type: 'error', error: 'assistant_provider', message: 'The AI provider failed.', detail: null }]);
  assert.deepEqual(err, [{ kind: 'error', code: 'assistant_provider', text: 'The AI provider failed.' }]);
  const limit = run([{ type: 'done', reason: 'max_steps', conversation: { id: 'c', title: 't' } }]);
  assert.deepEqual(limit, [{ kind: 'stopped', reason: 'max_steps' }]);
});

test('a stored conversation: messages, then steps; a pending one waits as an approval', () => {
  const at = '2026-11-27T00:00:00Z';
  const items = fromConversation({
    id: 'c',
    title: 't',
    created_at: at,
    last_used_at: at,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', text: '', tool_calls: [{ id: 'x', name: 'list', input: {} }] },
      { role: 'tool', tool_call_id: 'x', name: 'list', content: '{}' },
      { role: 'assistant', text: 'ok', tool_calls: [] },
    ],
    steps: [
      { id: 's1', tool: 'move', input: {}, status: 'done', undo: true, created_at: at },
      { id: 's2', tool: 'delete', input: { path: '/x' }, status: 'pending', undo: false, created_at: at },
    ],
  });
  assert.deepEqual(
    items.map((i) => i.kind),
    ['user', 'answer', 'step', 'approval'],
  );
  assert.equal(summary({ from: '/a', to: '/b' }), '/a → /b');
  assert.equal(summary({ path: '/x' }), '/x');
});
