// HTTP transport (browser mode, served by `inkstone-cli serve`): `POST /api/<method>`
// and `POST /api/stream/<method>` (server-sent events read through fetch), with the
// per-launch token taken from the URL fragment.

import { abortError, type ClientError, internalError, isClientError, offlineError, toClientError } from "./errors";
import { readEventStream } from "./sse";
import type { Transport } from "./transport";

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
    async stream(method, params, onEvent, streamOptions) {
      const signal = streamOptions?.signal;
      const res = await request(`/api/stream/${method}`, params, "text/event-stream", signal);
      if (res.status !== 200) throw await errorFromResponse(res);
      if (!res.body) throw internalError("The backend sent an empty stream.");
      return readEventStream(res.body, onEvent, signal);
    },
  };
}

/** The problem id of a refused access token: the page's address (its `#token=`) is from
 * an earlier launch of `inkstone-cli serve`, or carries no token at all. */
export const STALE_ADDRESS = "stale_address";

async function errorFromResponse(res: Response): Promise<ClientError> {
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    return offlineError(e);
  }
  let error: ClientError = internalError(`The backend answered with HTTP ${res.status}.`, { status: res.status });
  try {
    const body: unknown = JSON.parse(text);
    if (isClientError(body)) error = toClientError(body);
  } catch {
    // fall through
  }
  // 401 is the server's answer to a missing or wrong token only (every other refusal is
  // 403 or a code's own status): the page must be opened from this launch's address.
  if (res.status === 401) error.messageId ??= STALE_ADDRESS;
  return error;
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
