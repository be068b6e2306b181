/** The rule list's reordering, pure (drag and drop and the arrow buttons both end here). */
import type { ReplicaRule } from '../../../server/contract';

/** `rules` with the one at `from` moved to `to`, renumbered 10, 20, 30…: only the rows whose priority changed. */
export function reorder(rules: ReplicaRule[], from: number, to: number): { id: number; priority: number }[] {
  const next = [...rules];
  const [moved] = next.splice(from, 1);
  next.splice(to, 0, moved);
  return next.map((r, i) => ({ id: r.id, priority: (i + 1) * 10 })).filter((x, i) => next[i].priority !== x.priority);
}
