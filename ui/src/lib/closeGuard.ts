// Saving before the desktop window closes. The shell holds a close request back, sends
// `inkstone://flush-before-close`, and closes once the UI calls `window_flushed` (or
// after its own grace period, so a stuck page never keeps the window open). Open
// editors register their flush here; text typed within the autosave delay survives.

import { listen } from "@tauri-apps/api/event";
import { invoke, isTauri } from "@tauri-apps/api/core";

export const FLUSH_BEFORE_CLOSE = "inkstone://flush-before-close";

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

const tauriDeps: CloseGuardDeps = {
  listen: (event, handler) => listen(event, handler),
  done: () => invoke("window_flushed"),
};

/** In the desktop app, answers the shell's close request once everything is saved. */
export function installCloseGuard(deps: CloseGuardDeps | null = isTauri() ? tauriDeps : null): void {
  if (!deps) return;
  void deps.listen(FLUSH_BEFORE_CLOSE, () => {
    void flushAll().then(() => deps.done().catch(() => undefined));
  });
}
