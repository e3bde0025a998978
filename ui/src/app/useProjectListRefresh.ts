// Sync may have brought projects (a first pull of a teammate's project, new heads), or
// another window of this data folder saved one (the engine pushes its local-change
// marker): the list reads itself again, without a reload.
import { useEffect } from "react";
import type { ApiClient } from "../shared/api/client";
import { syncStoreFor } from "../features/sync";

export function useProjectListRefresh(client: ApiClient, loadProjects: (quiet?: boolean) => Promise<void>) {
  useEffect(() => {
    const store = syncStoreFor(client);
    let { changes, local } = store.getSnapshot();
    return store.subscribe(() => {
      const now = store.getSnapshot();
      if (now.changes === changes && now.local === local) return;
      ({ changes, local } = now);
      void loadProjects(true);
    });
  }, [client, loadProjects]);
}
