/**
 * The folder tree of the sidebar: storages at the top, sub-folders loaded
 * when a branch is opened, the branches above the open folder opened by
 * themselves. Rows dragged from the listing can be dropped on any folder
 * here to move them.
 */
import { useEffect, useState, type DragEvent } from 'react';
import { useI18n } from '../i18n';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';
import { baseName, isInside, joinPath, routeOf } from '../lib/ui-path';
import { listFolder } from './file-api';
import { isCipherRow } from '../vault/vault-paths';
import { ROWS_MIME } from './drag';

interface Props {
  /** The open folder (UI path). */
  path: string;
  /** Bumped when folders may have changed (a write, a realtime frame). */
  tick: number;
  onDropInto: (dest: string, ev: DragEvent) => void;
}

const dirsOf = async (path: string): Promise<string[]> => {
  const l = await listFolder({ path, sort: 'name', dir: 'asc', limit: 1000 });
  return l.entries.filter((e) => e.type === 'dir' && !isCipherRow(e)).map((e) => joinPath(path, e.name));
};

export function FolderTree({ path, tick, onDropInto }: Props) {
  const { t } = useI18n();
  const [children, setChildren] = useState<Map<string, string[]>>(new Map());
  const [open, setOpen] = useState<Set<string>>(new Set(['/']));
  const [over, setOver] = useState<string | null>(null);

  const load = (p: string) =>
    dirsOf(p).then(
      (d) => setChildren((m) => new Map(m).set(p, d)),
      () => setChildren((m) => new Map(m).set(p, [])),
    );

  // Open every branch down to and including the open folder, and re-read the open branches when something changed.
  useEffect(() => {
    const chain = ['/'];
    for (const seg of path.split('/').filter(Boolean)) chain.push(joinPath(chain[chain.length - 1], seg));
    setOpen((o) => new Set([...o, ...chain]));
  }, [path]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `load` is a new closure each render; the open branches and the change tick are what re-reads them
  useEffect(() => {
    for (const p of open) void load(p);
  }, [open, tick]);

  const toggle = (p: string) => setOpen((o) => (o.has(p) ? new Set([...o].filter((x) => x !== p && !isInside(x, p))) : new Set([...o, p])));

  const drop = {
    over: (p: string) => (ev: DragEvent) => {
      if (!ev.dataTransfer.types.includes(ROWS_MIME) || p === '/') return;
      ev.preventDefault();
      ev.dataTransfer.dropEffect = 'move';
      setOver(p);
    },
    leave: () => setOver(null),
    drop: (p: string) => (ev: DragEvent) => {
      setOver(null);
      if (!ev.dataTransfer.types.includes(ROWS_MIME)) return;
      ev.preventDefault();
      onDropInto(p, ev);
    },
  };

  const branch = (p: string, depth: number) => {
    const kids = children.get(p);
    if (!kids) return null;
    return (
      <ul className="tree">
        {kids.map((k) => {
          const isOpen = open.has(k);
          const name = baseName(k);
          return (
            <li key={k}>
              <div
                className={`tree-row${over === k ? ' drop-target' : ''}`}
                style={{ paddingLeft: `${depth * 0.9}rem` }}
                onDragOver={drop.over(k)}
                onDragLeave={drop.leave}
                onDrop={drop.drop(k)}
              >
                <button
                  type="button"
                  className="icon-btn tree-toggle"
                  aria-expanded={isOpen}
                  aria-label={t(isOpen ? 'files.tree.collapse' : 'files.tree.expand', { name })}
                  onClick={() => toggle(k)}
                >
                  {isOpen ? '▾' : '▸'}
                </button>
                <a href={withBase(routeOf(k))} onClick={linkClick} aria-current={k === path ? 'location' : undefined} title={k}>
                  {name}
                </a>
              </div>
              {isOpen && branch(k, depth + 1)}
            </li>
          );
        })}
      </ul>
    );
  };

  return (
    <nav className="folder-tree" aria-label={t('files.tree')}>
      {branch('/', 0)}
    </nav>
  );
}
