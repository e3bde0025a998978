// The one place the UI reaches the backend.
//
// Two transports share one interface:
// - Tauri (desktop app): `invoke('api_call' | 'api_stream', ...)`.
// - HTTP (browser mode, served by `inkstone-cli serve`): `POST /api/<method>` and
//   `POST /api/stream/<method>` (server-sent events read through fetch).
// Tests pass their own transport (see ./fake.ts) or a fake `fetch` / `invoke`.

import { Channel, invoke as tauriInvoke, isTauri } from "@tauri-apps/api/core";
import type { ApiError, ApiMethods, ErrorCode, Hint, ProgressEvent } from "./generated";

export type { ApiError, ApiMethods, Hint, ProgressEvent };

export type MethodName = keyof ApiMethods & string;
export type ParamsOf<M extends MethodName> = ApiMethods[M]["params"];
export type ResultOf<M extends MethodName> = ApiMethods[M]["result"];
/** Progress payload of a streaming method (a method-specific type if the generated types give one). */
export type ProgressOf<M extends MethodName> = ApiMethods[M] extends { progress: infer P } ? P : ProgressEvent;

/** Codes the client itself can produce, on top of the server's. */
export type ClientErrorCode = ErrorCode | "OFFLINE" | "INTERNAL";

/** What every failed call rejects with: the server's ApiError, or one the client made. */
export interface ClientError {
  code: ClientErrorCode;
  message: string;
  hints: Hint[];
  details?: unknown;
}

export interface StreamOptions {
  /** Aborts the request (HTTP) or stops waiting for it (Tauri). */
  signal?: AbortSignal;
}

/** Untyped wire layer; `ApiClient` adds the types. */
export interface Transport {
  readonly kind: string;
  call(method: string, params: unknown): Promise<unknown>;
  stream(
    method: string,
    params: unknown,
    onProgress: (data: unknown) => void,
    options?: StreamOptions,
  ): Promise<unknown>;
}

// ---------------------------------------------------------------------------
// Errors

export function isClientError(value: unknown): value is ClientError {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === "string" && typeof v.message === "string";
}

/** Normalises anything thrown or rejected into a ClientError. */
export function toClientError(value: unknown): ClientError {
  if (isClientError(value)) {
    const v = value as ClientError;
    const hints = Array.isArray(v.hints)
      ? v.hints.filter((h): h is Hint => typeof h === "object" && h !== null && typeof h.id === "string")
      : [];
    const out: ClientError = { code: v.code, message: v.message, hints };
    if (v.details !== undefined) out.details = v.details;
    return out;
  }
  if (typeof value === "string") return internalError(value);
  if (value instanceof Error) return internalError(value.message);
  return internalError("Unexpected error");
}

function internalError(message: string, details?: unknown): ClientError {
  const e: ClientError = { code: "INTERNAL", message, hints: [] };
  if (details !== undefined) e.details = details;
  return e;
}

export const OFFLINE_HINT: Hint = {
  id: "offline.check_running",
  message: "Check that Inkstone is still running, then try again.",
};

export function offlineError(cause?: unknown): ClientError {
  const reason = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : undefined;
  const e: ClientError = {
    code: "OFFLINE",
    message: "Could not reach the Inkstone backend.",
    hints: [OFFLINE_HINT],
  };
  if (reason) e.details = { reason };
  return e;
}

function abortError(): ClientError {
  return { code: "INTERNAL", message: "The request was cancelled.", hints: [], details: { aborted: true } };
}

// ---------------------------------------------------------------------------
// Typed client

export class ApiClient {
  constructor(readonly transport: Transport) {}

  async call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    try {
      return (await this.transport.call(method, params)) as ResultOf<M>;
    } catch (e) {
      throw toClientError(e);
    }
  }

  async stream<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    onProgress: (data: ProgressOf<M>) => void,
    options?: StreamOptions,
  ): Promise<ResultOf<M>> {
    try {
      return (await this.transport.stream(
        method,
        params,
        (d) => onProgress(d as ProgressOf<M>),
        options,
      )) as ResultOf<M>;
    } catch (e) {
      throw toClientError(e);
    }
  }
}

// ---------------------------------------------------------------------------
// Tauri transport

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
    async stream(method, params, onProgress, options) {
      const channel = deps.makeChannel();
      channel.onmessage = (message) => {
        if (typeof message === "object" && message !== null) {
          const m = message as { type?: unknown; data?: unknown };
          if (m.type === "progress") onProgress(m.data);
        }
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

function withAbort<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

// ---------------------------------------------------------------------------
// HTTP transport

export type FetchFn = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpTransportOptions {
  /** Bearer token for /api/*. */
  token: string | null;
  /** Origin prefix; '' means same origin. */
  baseUrl?: string;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: FetchFn;
}

export function createHttpTransport(options: HttpTransportOptions): Transport {
  const base = (options.baseUrl ?? "").replace(/\/+$/, "");
  // Call through a closure: a detached `window.fetch` throws "Illegal invocation".
  const doFetch: FetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  const request = async (path: string, params: unknown, accept: string, signal?: AbortSignal) => {
    const headers: Record<string, string> = {
      "Content-Type": "application/json",
      Accept: accept,
    };
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    const init: RequestInit = {
      method: "POST",
      headers,
      body: JSON.stringify(params === undefined ? {} : params),
      cache: "no-store",
    };
    if (signal) init.signal = signal;
    try {
      return await doFetch(`${base}${path}`, init);
    } catch (e) {
      if (signal?.aborted) throw abortError();
      throw offlineError(e);
    }
  };

  return {
    kind: "http",
    async call(method, params) {
      const res = await request(`/api/${method}`, params, "application/json");
      if (res.status !== 200) throw await errorFromResponse(res);
      let text: string;
      try {
        text = await res.text();
      } catch (e) {
        throw offlineError(e);
      }
      try {
        return text === "" ? null : JSON.parse(text);
      } catch {
        throw internalError("The backend sent a response that is not valid JSON.", { status: res.status });
      }
    },
    async stream(method, params, onProgress, streamOptions) {
      const signal = streamOptions?.signal;
      const res = await request(`/api/stream/${method}`, params, "text/event-stream", signal);
      if (res.status !== 200) throw await errorFromResponse(res);
      if (!res.body) throw internalError("The backend sent an empty stream.");
      return readEventStream(res.body, onProgress, signal);
    },
  };
}

async function errorFromResponse(res: Response): Promise<ClientError> {
  let text = "";
  try {
    text = await res.text();
  } catch (e) {
    return offlineError(e);
  }
  try {
    const body: unknown = JSON.parse(text);
    if (isClientError(body)) return toClientError(body);
  } catch {
    // fall through
  }
  return internalError(`The backend answered with HTTP ${res.status}.`, { status: res.status });
}

// ---------------------------------------------------------------------------
// Server-sent events (read from a fetch body, not EventSource)

export interface SseEvent {
  event: string;
  data: string;
}

/** Incremental SSE parser: feed decoded text in arbitrary pieces. */
export class SseParser {
  private buffer = "";
  private eventType = "";
  private dataLines: string[] = [];
  private hasData = false;

  /** Feeds text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      if (ch === "\r") {
        // A lone '\r' at the very end may be the first half of "\r\n": wait for more.
        if (i + 1 === this.buffer.length) break;
      }
      const line = this.buffer.slice(start, i);
      if (ch === "\r" && this.buffer[i + 1] === "\n") i++;
      start = i + 1;
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** Ends the input; an event lacking its final blank line is still delivered. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer !== "") {
      const rest = this.buffer.replace(/\r$/, "");
      this.buffer = "";
      const ev = this.line(rest);
      if (ev) out.push(ev);
    }
    const ev = this.line("");
    if (ev) out.push(ev);
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === "") {
      if (!this.hasData) {
        this.eventType = "";
        return null;
      }
      const ev = { event: this.eventType || "message", data: this.dataLines.join("\n") };
      this.eventType = "";
      this.dataLines = [];
      this.hasData = false;
      return ev;
    }
    if (line.startsWith(":")) return null; // comment / keep-alive
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.eventType = value;
    else if (field === "data") {
      this.dataLines.push(value);
      this.hasData = true;
    }
    // "id", "retry" and unknown fields are ignored.
    return null;
  }
}

async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onProgress: (data: unknown) => void,
  signal?: AbortSignal,
): Promise<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  const parser = new SseParser();

  type Outcome = { done: true; value: unknown } | { done: true; error: ClientError } | { done: false };
  const handle = (events: SseEvent[]): Outcome => {
    for (const ev of events) {
      let data: unknown;
      try {
        data = ev.data === "" ? null : JSON.parse(ev.data);
      } catch {
        return { done: true, error: internalError("The backend sent a stream event that is not valid JSON.") };
      }
      if (ev.event === "progress") onProgress(data);
      else if (ev.event === "result") return { done: true, value: data };
      else if (ev.event === "error") return { done: true, error: toClientError(data) };
    }
    return { done: false };
  };

  const finish = async (o: Outcome): Promise<unknown> => {
    reader.cancel().catch(() => undefined);
    if ("error" in o) throw o.error;
    if ("value" in o) return o.value;
    return undefined;
  };

  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (e) {
      if (signal?.aborted) throw abortError();
      throw offlineError(e);
    }
    if (chunk.done) {
      const o = handle([...parser.push(decoder.decode()), ...parser.end()]);
      if (o.done) return finish(o);
      throw offlineError("The stream ended before a result arrived.");
    }
    const o = handle(parser.push(decoder.decode(chunk.value, { stream: true })));
    if (o.done) return finish(o);
  }
}

// ---------------------------------------------------------------------------
// Token handling for browser mode

export const TOKEN_STORAGE_KEY = "inkstone.token";

export interface TokenEnv {
  location: Pick<Location, "hash" | "pathname" | "search">;
  storage: Pick<Storage, "getItem" | "setItem"> | null;
  history: Pick<History, "replaceState" | "state"> | null;
}

/**
 * Takes `#token=...` out of the URL (keeping it in sessionStorage so reloads and tabs
 * opened from the app still work) and returns the token to use, or null.
 */
export function takeToken(env: TokenEnv): string | null {
  const hash = env.location.hash.replace(/^#/, "");
  const params = new URLSearchParams(hash);
  const fromHash = params.get("token");
  if (fromHash) {
    try {
      env.storage?.setItem(TOKEN_STORAGE_KEY, fromHash);
    } catch {
      // storage may be unavailable (private mode); the token still works for this page
    }
    params.delete("token");
    const rest = params.toString();
    const url = env.location.pathname + env.location.search + (rest ? `#${rest}` : "");
    env.history?.replaceState(env.history.state, "", url);
    return fromHash;
  }
  try {
    return env.storage?.getItem(TOKEN_STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// Default transport for the running app

export function createDefaultTransport(): Transport {
  if (isTauri()) return createTauriTransport();
  let storage: Storage | null = null;
  try {
    storage = window.sessionStorage;
  } catch {
    storage = null;
  }
  const token = takeToken({ location: window.location, storage, history: window.history });
  return createHttpTransport({ token });
}
