// Sync may have brought projects (a first pull of a teammate's project, new heads):
// the list reads itself again, without a reload. Another window of this data folder
// moves no sync marker: while connected, a poll reads the list again at most every
// OTHER_WINDOW_MS, as the open editor does.
import { useEffect } from "react";
import type { ApiClient } from "../shared/api/client";
import { OTHER_WINDOW_MS, syncStoreFor } from "../features/sync";

export function useProjectListRefresh(client: ApiClient, loadProjects: (quiet?: boolean) => Promise<void>) {
  useEffect(() => {
    const store = syncStoreFor(client);
    let changes = store.getSnapshot().changes;
    let readAt = Date.now();
    const reload = () => {
      readAt = Date.now();
      void loadProjects(true);
    };
    const unsubscribe = store.subscribe(() => {
      const now = store.getSnapshot().changes;
      if (now === changes) return;
      changes = now;
      reload();
    });
    const unpoll = store.onPoll((snap) => {
      if (snap.status?.connected && Date.now() - readAt >= OTHER_WINDOW_MS) reload();
    });
    return () => {
      unsubscribe();
      unpoll();
    };
  }, [client, loadProjects]);
}
