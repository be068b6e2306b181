/**
 * Minimal 5-field cron (`min hour day-of-month month day-of-week`, with `*`,
 * lists, ranges and steps). `nextRun` returns the first matching minute after `from`.
 */
export interface CronSpec {
  fields: Array<Set<number>>;
  source: string;
}

const RANGES: Array<[number, number]> = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 6]];

export function parseCron(expr: string): CronSpec {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`cron "${expr}" must have 5 fields`);
  const fields = parts.map((p, i) => {
    const [lo, hi] = RANGES[i];
    const set = new Set<number>();
    for (const item of p.split(',')) {
      const m = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/.exec(item);
      if (!m) throw new Error(`cron "${expr}": bad field "${item}"`);
      const step = m[2] ? Number(m[2]) : 1;
      const [a, b] = m[1] === '*' ? [lo, hi] : m[1].includes('-') ? m[1].split('-').map(Number) : [Number(m[1]), m[2] ? hi : Number(m[1])];
      if (a < lo || b > hi || a > b || step < 1) throw new Error(`cron "${expr}": "${item}" out of range`);
      for (let v = a; v <= b; v += step) set.add(i === 4 && v === 7 ? 0 : v);
    }
    return set;
  });
  return { fields, source: expr };
}

export function nextRun(spec: CronSpec, from: Date): Date {
  const d = new Date(from.getTime());
  d.setSeconds(0, 0);
  d.setMinutes(d.getMinutes() + 1);
  for (let i = 0; i < 366 * 24 * 60; i++) {
    const [mi, h, dom, mon, dow] = spec.fields;
    if (mon.has(d.getMonth() + 1) && dom.has(d.getDate()) && dow.has(d.getDay()) && h.has(d.getHours()) && mi.has(d.getMinutes())) return d;
    d.setMinutes(d.getMinutes() + 1);
  }
  throw new Error(`cron "${spec.source}" never fires`);
}
