// The untyped wire layer every transport implements; `ApiClient` (./client.ts) adds
// the method types.

import type { StreamEvent } from "./generated";
import { abortError } from "./errors";

export interface StreamOptions {
  /** Aborts the request (HTTP) or stops waiting for it (Tauri). */
  signal?: AbortSignal;
}

export interface Transport {
  readonly kind: string;
  call(method: string, params: unknown): Promise<unknown>;
  /** Runs `method` as a stream, handing every event the backend sends to `onEvent`. */
  stream(
    method: string,
    params: unknown,
    onEvent: (event: StreamEvent) => void,
    options?: StreamOptions,
  ): Promise<unknown>;
}

/** Rejects with the cancellation error when `signal` aborts before `p` settles. */
export function withAbort<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
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
