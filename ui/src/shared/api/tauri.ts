// Tauri transport (desktop app): `invoke('api_call' | 'api_stream', ...)`, stream
// events arriving on a channel as `StreamEvent` values.

import { Channel, invoke as tauriInvoke, isTauri } from "@tauri-apps/api/core";
import { listen as tauriListen } from "@tauri-apps/api/event";
import { toClientError } from "./errors";
import type { StreamEvent } from "./generated";
import { type Transport, withAbort } from "./transport";

export { isTauri };

type InvokeFn = (cmd: string, args?: Record<string, unknown>) => Promise<unknown>;
interface ChannelLike {
  onmessage: (message: unknown) => void;
}

export interface TauriDeps {
  invoke: InvokeFn;
  makeChannel: () => ChannelLike;
}

const realTauriDeps: TauriDeps = {
  invoke: (cmd, args) => tauriInvoke(cmd, args),
  makeChannel: () => new Channel<unknown>() as unknown as ChannelLike,
};

/** A channel message is a serialized `StreamEvent`: `{ type, data }`. */
function isStreamEvent(message: unknown): message is StreamEvent {
  return typeof message === "object" && message !== null && typeof (message as { type?: unknown }).type === "string";
}

export function createTauriTransport(deps: TauriDeps = realTauriDeps): Transport {
  return {
    kind: "tauri",
    async call(method, params) {
      try {
        return await deps.invoke("api_call", { method, params });
      } catch (e) {
        throw toClientError(e);
      }
    },
    async stream(method, params, onEvent, options) {
      const channel = deps.makeChannel();
      channel.onmessage = (message) => {
        if (isStreamEvent(message)) onEvent(message);
      };
      const pending = deps.invoke("api_stream", { method, params, onEvent: channel });
      try {
        return await withAbort(pending, options?.signal);
      } catch (e) {
        throw toClientError(e);
      }
    },
  };
}

/** The event the desktop shell sends when the window is asked to close: the UI saves,
 * then calls `window_flushed` (see lib/closeGuard.ts). */
export const FLUSH_BEFORE_CLOSE = "inkstone://flush-before-close";

/** The close handshake with the desktop shell; `null` outside the desktop app. */
export function tauriCloseHandshake(): { listen: (event: string, handler: () => void) => Promise<unknown>; done: () => Promise<unknown> } | null {
  if (!isTauri()) return null;
  return {
    listen: (event, handler) => tauriListen(event, handler),
    done: () => tauriInvoke("window_flushed"),
  };
}

/** Sent by the desktop shell when a Markdown file given to a later launch became a
 * project: the UI reads the project list again and opens it. */
export const OPENED_PROJECT = "inkstone://opened-project";

/** Listens for files opened by a later launch; a no-op outside the desktop app. */
export function onOpenedProject(handler: (projectId: string | null) => void): () => void {
  if (!isTauri()) return () => undefined;
  let stop: (() => void) | null = null;
  let stopped = false;
  void tauriListen<{ projectId?: string | null }>(OPENED_PROJECT, (event) => handler(event.payload?.projectId ?? null)).then((unlisten) => {
    if (stopped) unlisten();
    else stop = unlisten;
  });
  return () => {
    stopped = true;
    stop?.();
  };
}

/** Tells the desktop shell the first screen is painted, with the page's marks (see
 * lib/startup.ts); nothing outside the desktop app. */
export function reportStartup(marks: Record<string, number>): Promise<unknown> {
  if (!isTauri()) return Promise.resolve();
  return tauriInvoke("startup_done", { marks });
}

/** Starts the desktop app again, into an update `update.install` put in place; `null`
 * outside the desktop app (a browser tab has nothing to restart). */
export function appRestarter(): (() => Promise<unknown>) | null {
  if (!isTauri()) return null;
  return () => tauriInvoke("restart_app").catch((e: unknown) => Promise.reject(toClientError(e)));
}

/** Shows the data folder or the log folder in the system's file manager; `null` outside
 * the desktop app (the browser cannot open folders: Help shows the path to copy). */
export function folderOpener(): ((which: "data" | "logs") => Promise<unknown>) | null {
  if (!isTauri()) return null;
  return (which) => tauriInvoke("reveal_folder", { which }).catch((e: unknown) => Promise.reject(toClientError(e)));
}
