// The project screen's model for React: one ProjectSession per view, rendered through
// useSyncExternalStore; opened on mount, following sync while open, and left (what is
// pending kept, then saved) when the view, the page or the desktop window goes away.
import { useEffect, useLayoutEffect, useState, useSyncExternalStore } from "react";
import type { ApiClient } from "../../shared/api/client";
import type { Project } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { beforeClose } from "../../shared/lib/closeGuard";
import { Drafting } from "../drafting";
import { syncStoreFor } from "../sync";
import { ProjectSession, type SessionHost } from "./session";

/** Hands the session's calls to the latest callbacks the view rendered with. */
class HostRelay implements SessionHost {
  constructor(private now: SessionHost) {}
  update(now: SessionHost) {
    this.now = now;
  }
  t: SessionHost["t"] = (id, vars) => this.now.t(id, vars);
  toast = (m: string) => this.now.toast(m);
  showError = (e: unknown) => this.now.showError(e);
  projectChanged = (p: Project) => this.now.projectChanged(p);
}

export function useProjectSession(projectId: string, onProjectChanged: (p: Project) => void) {
  const { client, t, toast, showError } = useApp();
  // The session reaches the person through the latest of these (the language may change).
  const [host] = useState(() => new HostRelay({ t, toast, showError, projectChanged: onProjectChanged }));
  useLayoutEffect(() => host.update({ t, toast, showError, projectChanged: onProjectChanged }));
  const [session] = useState(() => new ProjectSession(client, projectId, host));
  const s = useSyncExternalStore(session.subscribe, session.getSnapshot);

  // Open the project; follow sync while it is open. Save what is pending when the project
  // closes, the page goes away, or the desktop window is asked to close (the shell waits
  // for this save); text not stored yet is kept first (see kept.ts), so nothing is lost.
  useEffect(() => {
    void session.open();
    const stopFollowing = session.followSync();
    const onHide = () => void session.leave().catch(() => undefined);
    window.addEventListener("pagehide", onHide);
    const unregister = beforeClose(() => session.leave());
    return () => {
      stopFollowing();
      window.removeEventListener("pagehide", onHide);
      unregister();
      onHide();
      session.close();
    };
  }, [session]);
  return { session, s };
}

/** The project's drafting sessions: they live as long as the view, so a turn keeps
 * streaming while another tab of the right-hand panel is open. */
export function useDrafting(client: ApiClient, projectId: string, session: ProjectSession, revision: number): Drafting {
  const { t } = useApp();
  const [drafting] = useState(() => new Drafting(client, projectId));
  useEffect(() => {
    drafting.revive();
    return () => drafting.dispose();
  }, [drafting]);
  // A turn or compaction started somewhere (another window, the API): the engine pushes
  // it in the sync status every window holds open, and the open session follows it.
  // The marker shown now is where this view starts from: the next push that moves it is news.
  useEffect(() => {
    const sync = syncStoreFor(client);
    const shown = sync.getSnapshot().status;
    if (shown) drafting.sessionActivity(shown.sessionActivity);
    return sync.onPoll((snap) => snap.status && drafting.sessionActivity(snap.status.sessionActivity));
  }, [client, drafting]);
  // The assistant applied an approved change: show the project as it is now.
  useEffect(() => {
    drafting.setProjectWriteHandler(() => void session.reload((p) => (p.head > 0 ? t("ai.applied", { n: p.head }) : t("ai.review.acceptedNoVersion"))));
  }, [drafting, session, t]);
  // A saved edit can make open proposals stale: list them again.
  useEffect(() => {
    const store = drafting.getSnapshot().active;
    if (!store || revision === 0) return;
    const timer = setTimeout(() => void store.refreshProposals(), 300);
    return () => clearTimeout(timer);
  }, [drafting, revision]);
  return drafting;
}
