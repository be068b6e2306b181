/**
 * Files and folders from a drop or a picker, as (file, relative path) pairs plus
 * the folders to create first, so a dropped tree keeps its structure (also its
 * empty folders).
 */
export interface Picked {
  files: { file: File; rel: string }[];
  dirs: string[];
}

/** From <input type=file> (with `webkitdirectory`, files carry their relative path). */
export function fromInput(list: FileList): Picked {
  const files = [...list].map((file) => ({ file, rel: file.webkitRelativePath || file.name }));
  return { files, dirs: dirsOf(files.map((f) => f.rel)) };
}

/** From a drop: walks dropped folders through the entries API. */
export async function fromDrop(dt: DataTransfer): Promise<Picked> {
  const out: Picked = { files: [], dirs: [] };
  const entries = [...dt.items].map((i) => i.webkitGetAsEntry?.()).filter((e): e is FileSystemEntry => !!e);
  if (!entries.length) return fromInput(dt.files);
  const walk = async (e: FileSystemEntry, prefix: string): Promise<void> => {
    if (e.isFile) {
      const file = await new Promise<File>((res, rej) => (e as FileSystemFileEntry).file(res, rej));
      out.files.push({ file, rel: prefix + e.name });
    } else if (e.isDirectory) {
      out.dirs.push(prefix + e.name);
      const reader = (e as FileSystemDirectoryEntry).createReader();
      // readEntries answers in batches; an empty batch ends the folder.
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const c of batch) await walk(c, `${prefix}${e.name}/`);
      }
    }
  };
  for (const e of entries) await walk(e, '');
  return out;
}

/** Every ancestor folder of the relative paths, parents before children. */
export function dirsOf(rels: string[]): string[] {
  const set = new Set<string>();
  for (const r of rels) {
    const segs = r.split('/').slice(0, -1);
    for (let i = 1; i <= segs.length; i++) set.add(segs.slice(0, i).join('/'));
  }
  return [...set].sort((a, b) => a.split('/').length - b.split('/').length);
}
