/**
 * Natural name order as one SQL-sortable key: case-folded, accents kept apart
 * from their letters, and each digit run prefixed by its length so `file9`
 * sorts before `file10`.
 */
export function sortKey(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/\d+/g, (d) => {
      const n = d.replace(/^0+(?=\d)/, '');
      return String(n.length).padStart(2, '0') + n;
    });
}
