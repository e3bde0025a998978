// The one data layer for reads and writes from React: TanStack Query over ApiClient.
// A read is cached under [method, params]; a write goes through ApiClient.call, which
// reports the reads it made stale (methods.ts), and every cached read among them is
// fetched again: no component lists what a write changes. Writes made outside these
// hooks (the models in session.ts, store.ts, profileForm.ts) refresh the cache the same
// way. A failed write reaches the person through the app's one error path (showError)
// unless the caller handles it.
import { keepPreviousData, QueryClient, useMutation, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect } from "react";
import { useApp } from "../context";
import type { ApiClient, MethodName, ParamsOf, ResultOf } from "./client";
import type { ReadMethod, WriteMethod } from "./methods";

const caches = new WeakMap<ApiClient, QueryClient>();

/** The query cache of one client (made on first use; tests get a fresh one with each client). */
// Each answer replaces the cached one as a whole (no structural sharing): an answer is
// what the engine said, and a component shows it as it did before the cache existed.
export function queryClientFor(client: ApiClient): QueryClient {
  let qc = caches.get(client);
  if (!qc) {
    const made = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity, refetchOnWindowFocus: false, structuralSharing: false } } });
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

export interface ReadOptions {
  /** `false` waits (a read that needs something not there yet). */
  enabled?: boolean;
  /** Read again each time a component showing it mounts ("always", the default: the engine
   * also changes things no write through this window made, such as a turn's memory items
   * or a teammate's version); `false` keeps what the cache holds. */
  refetchOnMount?: boolean | "always";
  /** A failed read goes to the app's one error path (showError) instead of the caller's
   * own banner. */
  report?: boolean;
  /** While the params' read runs, show the last params' answer (search as you type). */
  keepPrevious?: boolean;
  /** Runs before each read (a diff against the working copy saves the copy first); its
   * failure does not stop the read. */
  before?: () => Promise<void>;
}

/** A read, cached and fetched again when a write makes it stale. */
export function useMethod<M extends ReadMethod>(method: M, params: ParamsOf<M>, options: ReadOptions = {}) {
  const { client, showError } = useApp();
  const { report = false, refetchOnMount = "always", enabled, keepPrevious = false, before } = options;
  const read = async () => {
    if (before) await before().catch(() => undefined);
    return client.call(method, params);
  };
  const query = useQuery(
    { queryKey: queryKey(method, params), queryFn: read, refetchOnMount, enabled, placeholderData: keepPrevious ? keepPreviousData : undefined },
    queryClientFor(client),
  );
  const { error, refetch } = query;
  useEffect(() => {
    if (report && error) showError(error, () => void refetch());
  }, [report, error, refetch, showError]);
  return query;
}

/** A read outside a render (an event, an effect that needs the answer once, a helper
 * with no component): the cached answer while no write made it stale, else fetched and
 * cached, so it is refreshed by the same invalidations as `useMethod`. */
export function fetchRead<M extends ReadMethod>(client: ApiClient, method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  return queryClientFor(client).fetchQuery({ queryKey: queryKey(method, params), queryFn: () => client.call(method, params) });
}

/** A read that must be the engine's answer now, not the cache's (a proposal turns stale
 * with edits that no declared write marks): always fetched, and the cache updated. */
export function readFresh<M extends ReadMethod>(client: ApiClient, method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  return queryClientFor(client).fetchQuery({ queryKey: queryKey(method, params), queryFn: () => client.call(method, params), staleTime: 0 });
}

/** The cache of the client in context: for a read one event, not a render, needs
 * (`fetchQuery`), and for reads kept fresh by a push (`setQueryData`). */
export function useQueryCache(): QueryClient {
  return queryClientFor(useApp().client);
}

/** A write; a failure goes to the app's error banner unless `onError` takes it.
 * `run(params)` resolves to the result, or to `undefined` after a failure was shown. */
export function useWrite<M extends MethodName>(method: M, options: { onError?: (error: unknown) => void } = {}) {
  const { client, showError } = useApp();
  const mutation = useMutation<ResultOf<M>, unknown, ParamsOf<M>>(
    { mutationFn: (params) => client.call(method, params), onError: options.onError ?? ((e) => showError(e)) },
    queryClientFor(client),
  );
  const { mutateAsync } = mutation;
  const run = useCallback((params: ParamsOf<M>): Promise<ResultOf<M> | undefined> => mutateAsync(params).catch(() => undefined), [mutateAsync]);
  return { ...mutation, run };
}

type AnyWrite = { [M in MethodName]: { method: M; params: ParamsOf<M> } }[MethodName];

/** Any write, for a component that makes several: `write(method, params)` resolves to
 * the result, or to `undefined` once a failure has gone to the app's error banner (or
 * to `onError`). What each write makes stale is methods.ts's business, not the caller's. */
export function useWrites(options: { onError?: (error: unknown) => void } = {}) {
  const { client, showError } = useApp();
  const mutation = useMutation<unknown, unknown, AnyWrite>(
    { mutationFn: ({ method, params }) => client.call(method, params as never), onError: options.onError ?? ((e) => showError(e)) },
    queryClientFor(client),
  );
  const { mutateAsync } = mutation;
  const write = useCallback(
    <M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M> | undefined> =>
      mutateAsync({ method, params } as AnyWrite).then(
        (r) => r as ResultOf<M>,
        () => undefined,
      ),
    [mutateAsync],
  );
  return { write, pending: mutation.isPending };
}

/** Puts a write's answer in the cache as the read it is (a write that answers with the
 * state it made): a read of it still in flight, from the invalidation, is dropped first. */
export function usePutRead() {
  const cache = useQueryCache();
  return useCallback(
    async <M extends ReadMethod>(method: M, params: ParamsOf<M>, data: ResultOf<M>) => {
      const key = queryKey(method, params);
      await cache.cancelQueries({ queryKey: key });
      cache.setQueryData(key, data);
    },
    [cache],
  );
}

/** Writes for a flow that handles its own failure (a conflict reloads what it shows, a
 * dialog keeps its error beside the form): `call(method, params)` rejects with the error
 * instead of sending it to the banner. The cached reads each write makes stale are still
 * methods.ts's business. */
export function useCalls() {
  const { client } = useApp();
  const mutation = useMutation<unknown, unknown, AnyWrite>({ mutationFn: ({ method, params }) => client.call(method, params as never) }, queryClientFor(client));
  const { mutateAsync } = mutation;
  const call = useCallback(
    <M extends WriteMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> => mutateAsync({ method, params } as AnyWrite) as Promise<ResultOf<M>>,
    [mutateAsync],
  );
  return { call, pending: mutation.isPending };
}
