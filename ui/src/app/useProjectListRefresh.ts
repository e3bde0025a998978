// Sync may have brought projects (a first pull of a teammate's project, new heads), or
// another window of this data folder saved one (the engine pushes its local-change
// marker): the list reads itself again, without a reload. Not for this window's own
// autosave alone.
import { useEffect } from "react";
import type { ApiClient } from "../shared/api/client";
import { syncStoreFor } from "../features/sync";

export function useProjectListRefresh(client: ApiClient, loadProjects: (quiet?: boolean) => Promise<void>) {
  useEffect(() => {
    const store = syncStoreFor(client);
    let { changes, local } = store.getSnapshot();
    let localCount = store.getSnapshot().status?.localChanges ?? null;
    return store.subscribe(() => {
      const now = store.getSnapshot();
      const before = localCount;
      localCount = now.status?.localChanges ?? localCount;
      if (now.changes === changes && now.local === local) return;
      const oneLocalChange = now.changes === changes && before !== null && localCount === before + 1;
      const change = now.status?.lastLocalChange;
      ({ changes, local } = now);
      // This window's own autosave, and nothing else since the last push: the open
      // project already shows it in the list (onProjectChanged), so typing reads no list.
      // The push can come before the save's answer: that is waited for first.
      void (async () => {
        if (oneLocalChange) await client.savesSettled();
        if (oneLocalChange && client.savedHere(change)) return;
        await loadProjects(true);
      })();
    });
  }, [client, loadProjects]);
}
