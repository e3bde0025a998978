// The one data layer for reads and writes from React: TanStack Query over ApiClient.
// A read is cached under [method, params]; a write goes through ApiClient.call, which
// reports the reads it made stale (methods.ts), and every cached read among them is
// fetched again: no component lists what a write changes. Writes made outside these
// hooks (the models in session.ts, store.ts, profileForm.ts) refresh the cache the same
// way. A failed write reaches the person through the app's one error path (showError)
// unless the caller handles it.
import { QueryClient, useMutation, useQuery } from "@tanstack/react-query";
import { useApp } from "../context";
import type { ApiClient, MethodName, ParamsOf, ResultOf } from "./client";
import type { ReadMethod } from "./methods";

const caches = new WeakMap<ApiClient, QueryClient>();

/** The query cache of one client (made on first use; tests get a fresh one with each client). */
export function queryClientFor(client: ApiClient): QueryClient {
  let qc = caches.get(client);
  if (!qc) {
    const made = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity, refetchOnWindowFocus: false } } });
    client.onInvalidated((stale) => {
      if (stale === "all") void made.invalidateQueries();
      else for (const method of stale) void made.invalidateQueries({ queryKey: [method] });
    });
    caches.set(client, made);
    qc = made;
  }
  return qc;
}

/** The cache key of a read. */
export const queryKey = <M extends ReadMethod>(method: M, params: ParamsOf<M>) => [method, params] as const;

/** A read, cached and fetched again when a write makes it stale. `enabled: false` waits. */
export function useMethod<M extends ReadMethod>(method: M, params: ParamsOf<M>, options: { enabled?: boolean; refetchOnMount?: boolean | "always" } = {}) {
  const { client } = useApp();
  return useQuery({ queryKey: queryKey(method, params), queryFn: () => client.call(method, params), ...options }, queryClientFor(client));
}

/** A write; a failure goes to the app's error banner unless `onError` takes it. */
export function useWrite<M extends MethodName>(method: M, options: { onError?: (error: unknown) => void } = {}) {
  const { client, showError } = useApp();
  return useMutation<ResultOf<M>, unknown, ParamsOf<M>>(
    { mutationFn: (params) => client.call(method, params), onError: options.onError ?? ((e) => showError(e)) },
    queryClientFor(client),
  );
}
