// The one place the UI reaches the backend: a typed client over one of two transports.
//
// - Tauri (desktop app, ./tauri.ts): `invoke('api_call' | 'api_stream', ...)`.
// - HTTP (browser mode, served by `inkstone-cli serve`, ./http.ts): `POST /api/<method>`
//   and `POST /api/stream/<method>` (server-sent events, parsed in ./sse.ts).
// Both hand every stream event on as a `StreamEvent`; `ApiClient.stream` gives the
// caller the payload its method declares (the `StreamingEvents` map generated from the
// Rust method table). Tests pass their own transport (see ./fake.ts) or a fake
// `fetch` / `invoke`. The rest of the UI imports from this module only.

import { invalidatedBy } from "./methods";
import type {
  ApiError,
  ApiMethods,
  Event as HarnessEvent,
  Hint,
  ProgressEvent,
  StreamEvent,
  StreamingAlso,
  StreamingEvents,
  StreamingMethod,
  TimelinePatch,
} from "./generated";
import { STREAM_EVENT_TYPES } from "./generated";
import { createHttpTransport, STALE_ADDRESS, takeToken } from "./http";
import { createTauriTransport, isTauri } from "./tauri";
import { type ClientError, toClientError } from "./errors";
import type { StreamOptions, Transport } from "./transport";

export type { ApiError, ApiMethods, HarnessEvent, Hint, ProgressEvent, StreamEvent, StreamingMethod, TimelinePatch };
/** The methods that stream a session's timeline as patches when asked (`timeline: true`). */
export type TimelineMethod = keyof StreamingAlso & StreamingMethod;
export {
  type ClientError,
  type ClientErrorCode,
  isClientError,
  OFFLINE_HINT,
  offlineError,
  toClientError,
} from "./errors";
export { createHttpTransport, type FetchFn, type HttpTransportOptions, STALE_ADDRESS, takeToken, TOKEN_STORAGE_KEY, type TokenEnv } from "./http";
export { type SseEvent, SseParser } from "./sse";
export { appRestarter, createTauriTransport, FLUSH_BEFORE_CLOSE, folderOpener, onOpenedProject, OPENED_PROJECT, reportStartup, tauriCloseHandshake, type TauriDeps } from "./tauri";
export type { StreamOptions, Transport } from "./transport";

export type MethodName = keyof ApiMethods & string;
export type ParamsOf<M extends MethodName> = ApiMethods[M]["params"];
export type ResultOf<M extends MethodName> = ApiMethods[M]["result"];
/** The payload of each event a streaming method sends (a `ProgressEvent`, a harness `Event`). */
export type EventOf<M extends StreamingMethod> = StreamingEvents[M]["data"];

// ---------------------------------------------------------------------------
// Typed client

export class ApiClient {
  private readonly invalidationListeners = new Set<(stale: readonly MethodName[] | "all") => void>();
  private readonly staleListeners = new Set<() => void>();
  /** The working-copy revision each project was last saved at through this client. */
  private readonly saved = new Map<string, number>();
  /** The saves through this client still on their way. */
  private readonly saving = new Set<Promise<unknown>>();

  constructor(readonly transport: Transport) {}

  /** The error a failed call rejects with; a refused launch token also tells the
   * listeners of `onStaleAddress`, whichever part of the UI made the call. */
  private failed(e: unknown): ClientError {
    const error = toClientError(e);
    if (error.messageId === STALE_ADDRESS) for (const listener of [...this.staleListeners]) listener();
    return error;
  }

  /** Calls `listener` when the backend refuses this page's access token (browser mode:
   * the address is from an earlier launch of `inkstone-cli serve`). */
  onStaleAddress(listener: () => void): () => void {
    this.staleListeners.add(listener);
    return () => {
      this.staleListeners.delete(listener);
    };
  }

  async call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    let result: ResultOf<M>;
    const sent = this.transport.call(method, params);
    if (method === "project.update") {
      this.saving.add(sent);
      void sent.finally(() => this.saving.delete(sent)).catch(() => undefined);
    }
    try {
      result = (await sent) as ResultOf<M>;
    } catch (e) {
      throw this.failed(e);
    }
    if (method === "project.update") {
      const p = result as ResultOf<"project.update">;
      this.saved.set(p.id, p.revision);
    }
    this.invalidated(method);
    return result;
  }

  /** Resolves once no save through this client is on its way: the push of a save can
   * arrive before its answer. */
  async savesSettled(): Promise<void> {
    while (this.saving.size > 0) await Promise.allSettled([...this.saving]);
  }

  /** Whether a pushed local change (`SyncStatus.lastLocalChange`) is a save this window
   * made through this client: its own autosave, which it need not read back. */
  savedHere(change: { projectId: string; revision: number } | null | undefined): boolean {
    return change != null && this.saved.get(change.projectId) === change.revision;
  }

  /** Calls `listener` after each successful write through this client with the reads
   * it made stale, as methods.ts declares them. */
  onInvalidated(listener: (stale: readonly MethodName[] | "all") => void): () => void {
    this.invalidationListeners.add(listener);
    return () => {
      this.invalidationListeners.delete(listener);
    };
  }

  /** Calls `listener` after each call through this client that changed the model
   * profiles (Settings → Models adds one while the AI panel offers to set one up). */
  onProfilesChanged(listener: () => void): () => void {
    return this.onInvalidated((stale) => {
      if (stale === "all" || stale.includes("llmProfile.list")) listener();
    });
  }

  /** Runs a streaming method, giving `onEvent` the payload of each event it sends. */
  async stream<M extends StreamingMethod>(
    method: M,
    params: ParamsOf<M>,
    onEvent: (event: EventOf<M>) => void,
    options?: StreamOptions,
  ): Promise<ResultOf<M>> {
    const type = STREAM_EVENT_TYPES[method];
    const deliver = (event: StreamEvent) => {
      // Each method sends events of the one type it declares (the engine checks this on
      // every debug run), so the type tag is enough to know the payload's type. A type
      // this client does not know yet is left alone rather than mistyped.
      if (event.type === type) onEvent(event.data as EventOf<M>);
    };
    let result: ResultOf<M>;
    try {
      result = (await this.transport.stream(method, params, deliver, options)) as ResultOf<M>;
    } catch (e) {
      throw this.failed(e);
    }
    this.invalidated(method);
    return result;
  }

  /** Runs a turn-driving method asking for the session's timeline patches instead of
   * its log's events (`timeline: true`): the engine then sends one patch per event and
   * no raw event, so each streamed delta reaches the window once. */
  async streamTimeline<M extends TimelineMethod>(
    method: M,
    params: ParamsOf<M>,
    onPatch: (patch: TimelinePatch) => void,
    options?: StreamOptions,
  ): Promise<ResultOf<M>> {
    const deliver = (event: StreamEvent) => {
      if (event.type === "timeline") onPatch(event.data);
    };
    let result: ResultOf<M>;
    try {
      result = (await this.transport.stream(method, { ...params, timeline: true }, deliver, options)) as ResultOf<M>;
    } catch (e) {
      throw this.failed(e);
    }
    this.invalidated(method);
    return result;
  }

  /** Tells the listeners which reads a successful call of `method` made stale. */
  private invalidated(method: MethodName) {
    const stale = invalidatedBy(method);
    if (stale === "all" || stale.length > 0) for (const listener of [...this.invalidationListeners]) listener(stale);
  }
}

// ---------------------------------------------------------------------------
// Default transport for the running app

export function createDefaultTransport(): Transport {
  if (isTauri()) return createTauriTransport();
  let storage: Storage | null;
  try {
    storage = window.sessionStorage;
  } catch {
    storage = null;
  }
  const token = takeToken({ location: window.location, storage, history: window.history });
  return createHttpTransport({ token });
}
