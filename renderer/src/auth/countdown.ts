/** A live seconds countdown for the sign-in lockout (429 `Retry-After`). */
import { useEffect, useState } from 'react';

/** Seconds left until `until` (ms epoch), ticking once a second; 0 once passed or when null. */
export function useCountdown(until: number | null): number {
  const left = () => (until === null ? 0 : Math.max(0, Math.ceil((until - Date.now()) / 1000)));
  const [s, setS] = useState(left);
  useEffect(() => {
    setS(left());
    if (until === null) return;
    const h = setInterval(() => {
      const v = left();
      setS(v);
      if (v === 0) clearInterval(h);
    }, 1000);
    return () => clearInterval(h);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [until]);
  return s;
}
