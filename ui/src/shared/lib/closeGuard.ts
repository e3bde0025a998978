// Saving before the desktop window closes. The shell holds a close request back, sends
// `inkstone://flush-before-close`, and closes once the UI calls `window_flushed` (or
// after its own grace period, so a stuck page never keeps the window open). Open
// editors register their flush here; text typed within the autosave delay survives.

import { FLUSH_BEFORE_CLOSE, tauriCloseHandshake } from "../api/client";

export { FLUSH_BEFORE_CLOSE };

type Flush = () => Promise<void>;
const flushers = new Set<Flush>();

/** Registers a flush to run before the window closes; returns the unregister function. */
export function beforeClose(flush: Flush): () => void {
  flushers.add(flush);
  return () => {
    flushers.delete(flush);
  };
}

/** Runs every registered flush; failures are swallowed (the window closes regardless). */
export async function flushAll(): Promise<void> {
  await Promise.allSettled(Array.from(flushers, (f) => f()));
}

export interface CloseGuardDeps {
  listen: (event: string, handler: () => void) => Promise<unknown>;
  done: () => Promise<unknown>;
}

/** In the desktop app, answers the shell's close request once everything is saved. */
export function installCloseGuard(deps: CloseGuardDeps | null = tauriCloseHandshake()): void {
  if (!deps) return;
  void deps.listen(FLUSH_BEFORE_CLOSE, () => {
    void flushAll().then(() => deps.done().catch(() => undefined));
  });
}
