/**
 * One tray line fed by the server (docs/server-host-protocol.md): `tick()`
 * reads the message and sends it only when its key (what the tray shows)
 * changed, so a periodic check almost never costs a message. A read that
 * throws (the database closing under a last tick) sends nothing: the tray
 * keeps its line until the next one.
 */
export interface HostLine {
  tick(): void;
}

export function hostLine<M>(read: () => M | Promise<M>, send: (m: M) => void, key: (m: M) => unknown = (m) => m): HostLine {
  let last = '';
  const seen = (m: M) => {
    const k = JSON.stringify(key(m));
    if (k === last) return;
    last = k;
    send(m);
  };
  return {
    tick() {
      let m: M | Promise<M>;
      try {
        m = read();
      } catch {
        return;
      }
      // A read from the database answers later (a rejection, like a throw, sends nothing).
      if (m instanceof Promise) void m.then(seen, () => undefined);
      else seen(m);
    },
  };
}
