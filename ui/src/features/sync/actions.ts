// The sync actions the sidebar's popover and Settings → Workspace share: one action at
// a time (which one runs is `busy`), its failure said where the person acted (`error`,
// dismissed with `clear`), and the result handed to the window's one sync store so
// every view shows it at once.
import { useMutation } from "@tanstack/react-query";
import { useCallback, useState } from "react";
import { toClientError, type ClientError } from "../../shared/api/client";
import { useQueryCache } from "../../shared/api/query";
import { useSync } from "./status";

export function useSyncActions<K extends string>() {
  const { snap, store } = useSync();
  const [error, setError] = useState<ClientError | null>(null);
  const action = useMutation<void, unknown, { what: K; run: () => Promise<void> }>(
    { mutationFn: ({ run }) => run(), onError: (e) => setError(toClientError(e)), onMutate: () => setError(null) },
    useQueryCache(),
  );
  const { mutateAsync } = action;
  /** Runs one action; resolves whether it succeeded (a failure is in `error`). */
  const act = (what: K, run: () => Promise<void>): Promise<boolean> => mutateAsync({ what, run }).then(
    () => true,
    () => false,
  );
  const busy: K | null = action.isPending ? action.variables.what : null;
  /** Pause or resume, whichever the state is not. */
  const togglePause = (what: K) =>
    act(what, async () => {
      await store.setPaused(!snap.status?.paused);
    });
  const clear = useCallback(() => setError(null), []);
  return { act, busy, error, clear, togglePause, store, snap };
}
