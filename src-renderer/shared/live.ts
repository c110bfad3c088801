/**
 * The renderer's two small habits, each written once: taking a value main pushes (subscribe, then
 * get) and the brief "copied" feedback after a Copy button.
 */
import { useCallback, useEffect, useRef, useState } from 'react';

/** What to do with a pushed value and with the first answer; every callback may change per render. */
export interface LiveValueHandlers<T> {
  /** A value main pushed (and the first answer, unless `answer` is given). */
  push: (value: T) => void;
  /** The first answer, when it is still the newest (no push came before it). */
  answer?: (value: T) => void;
  /** The first request failed and no push came before it. */
  failed?: () => void;
  /** The first request answered, whether or not a push made its value stale. */
  answered?: () => void;
}

/**
 * Subscribes to main's pushes, then asks for the current value. One race rule everywhere: a push
 * that arrives before the answer is newer than it, so the answer (or its failure) is then dropped.
 * Nothing is taken after the component unmounts. `subscribe` and `get` are the API's functions
 * (stable for the window's life); the handlers are read when called, so they may be inline.
 */
export function useLiveValue<T>(
  subscribe: (listener: (value: T) => void) => () => void,
  get: () => Promise<T>,
  handlers: LiveValueHandlers<T>,
): void {
  const latest = useRef(handlers);
  useEffect(() => {
    latest.current = handlers;
  });
  useEffect(() => {
    let live = true;
    let pushed = false;
    const off = subscribe((value) => {
      if (!live) return;
      pushed = true;
      latest.current.push(value);
    });
    get().then(
      (value) => {
        if (!live) return;
        if (!pushed) (latest.current.answer ?? latest.current.push)(value);
        latest.current.answered?.();
      },
      () => {
        if (live && !pushed) latest.current.failed?.();
      },
    );
    return () => {
      live = false;
      off();
    };
  }, [subscribe, get]);
}

/** How long a row or card says "copied" after its Copy button worked. */
export const COPIED_FEEDBACK_MS = 1500;

/**
 * Copy with feedback: `copy(id)` runs `copyById(id)` and, when it worked, `copiedId` is that id
 * for COPIED_FEEDBACK_MS (a failed copy says nothing).
 */
export function useCopyFeedback(copyById: (id: string) => Promise<unknown>): {
  copiedId: string | null;
  copy: (id: string) => void;
} {
  const [copiedId, setCopiedId] = useState<string | null>(null);
  useEffect(() => {
    if (!copiedId) return;
    const timer = window.setTimeout(() => setCopiedId(null), COPIED_FEEDBACK_MS);
    return () => window.clearTimeout(timer);
  }, [copiedId]);
  const copy = useCallback(
    (id: string) => {
      copyById(id).then(
        () => setCopiedId(id),
        () => undefined,
      );
    },
    [copyById],
  );
  return { copiedId, copy };
}
