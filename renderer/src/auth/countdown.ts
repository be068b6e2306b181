/** A live seconds countdown for the sign-in lockout (429 `Retry-After`). */
import { useEffect, useState } from 'react';
import { ApiError } from '../api/client';

/** Seconds left until `until` (ms epoch), ticking once a second; 0 once passed or when null. */
export function useCountdown(until: number | null): number {
  const left = () => (until === null ? 0 : Math.max(0, Math.ceil((until - Date.now()) / 1000)));
  const [s, setS] = useState(left);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `left` reads `until`, the one dependency; a new closure each render must not restart the interval
  useEffect(() => {
    setS(left());
    if (until === null) return;
    const h = setInterval(() => {
      const v = left();
      setS(v);
      if (v === 0) clearInterval(h);
    }, 1000);
    return () => clearInterval(h);
  }, [until]);
  return s;
}

/**
 * The sign-in lockout: `lockedBy(err)` starts the countdown and answers true
 * for a 429 (the caller then shows no other error); `left` is the seconds to wait.
 */
export function useLockout(): { left: number; lockedBy: (err: unknown) => boolean } {
  const [until, setUntil] = useState<number | null>(null);
  const left = useCountdown(until);
  const lockedBy = (err: unknown) => {
    if (!(err instanceof ApiError) || err.status !== 429) return false;
    const s = err.retryAfter ?? Number(err.params.retry_after ?? 60);
    setUntil(Date.now() + s * 1000);
    return true;
  };
  return { left, lockedBy };
}
