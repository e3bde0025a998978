import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { SyncStatus } from "../../shared/api/generated";
import { asSent } from "../../shared/testing/mergeRegions";
import { WorkspaceSync } from "./Workspace";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { SyncIndicator } from "./SyncIndicator";
import { FOCUS_SYNC_MIN_MS, syncStoreFor } from "./status";
import type { DeliveryJob } from "../../shared/api/generated";

afterEach(() => cleanup());

const connected: SyncStatus = {
  state: "conflict",
  connected: true,
  paused: false,
  serverUrl: "https://team.example",
  workspaceName: "团队",
  memberName: "bob",
  role: "editor",
  tokenFingerprint: "…9f3a",
  pending: 0,
  perfPending: 0,
  perfUnavailable: false,
  perfAccountDaysLocal: 0,
  perfConflicts: 0,
  localOnlyProjects: 0,
  localOnlyVersions: 0,
  failed: 0,
  conflicts: 1,
  offline: false,
  changes: 0,
  localChanges: 0,
  asOf: 0,
  sessionActivity: 0,
  jobs: [
    {
      id: "job_1",
      workspaceId: "wsp_1",
      projectId: "prj_1",
      versionId: "ver_1",
      versionNumber: 2,
      dedupeKey: "wsp_1:ver_1",
      state: { state: "conflict", server_head: 2 },
      attempts: 1,
      createdAt: "",
      updatedAt: "",
    },
  ],
};

const conflict = asSent({
  id: "cnf_1",
  projectId: "prj_1",
  kind: "push",
  state: "open",
  base: { title: "合", source: "一\n二\n", author: "Alice" },
  mine: { title: "合", source: "一\n二B\n", author: "Bob", localNumber: 2 },
  theirs: { title: "合", source: "一\n二A\n", author: "Alice", localNumber: 3, serverNumber: 2 },
  overlaps: [{ baseStart: 1, baseLen: 1, mine: "二B\n", theirs: "二A\n" }],
  jobIds: ["job_1"],
  createdAt: "",
  updatedAt: "",
});

describe("sync", () => {
  it("shows the conflict state, lists the jobs and resolves with the edited merge", async () => {
    const transport = new FakeTransport()
      .on("sync.status", () => connected)
      .on("sync.conflicts", () => ({ conflicts: [conflict] }))
      .on("sync.resolve", () => ({ conflict: { ...conflict, state: "resolved", resolution: 4 }, version: { number: 4 } as never }));
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport, "en", { toast: (t) => toasts.push(t) })}>
        <SyncIndicator onOpenSettings={() => undefined} />
      </WithCtx>,
    );
    const button = await screen.findByText("1 conflict");
    fireEvent.click(button);
    expect(screen.getByTestId("sync-jobs").textContent).toContain("conflict");
    fireEvent.click(await screen.findByTestId("sync-open-conflict"));
    // The view loads on first use. Overlapping edits: no automatic merge, the person edits the result.
    expect((await screen.findByTestId("conflict-overlaps")).textContent).toContain("1 place");
    expect(screen.queryByTestId("conflict-merged")).toBeNull();
    fireEvent.change(screen.getByTestId("conflict-result"), { target: { value: "一\n二AB\n" } });
    fireEvent.click(screen.getByTestId("conflict-edited"));
    await waitFor(() => expect(transport.callsTo("sync.resolve")).toEqual([{ conflictId: "cnf_1", choice: "edited", title: "合", source: "一\n二AB\n" }]));
    await waitFor(() => expect(toasts).toContain("Resolved as version 4"));
  });

  it("says the last failure in the person's language from its code", async () => {
    const failed: SyncStatus = {
      ...connected,
      state: "failed",
      conflicts: 0,
      failed: 1,
      jobs: [],
      lastError: "401 UNAUTHORIZED: A valid bearer token is required.",
      lastErrorCode: "UNAUTHORIZED",
    };
    for (const [lang, expected, detail] of [
      ["zh", "服务器不接受你的令牌", false],
      ["en", "The server did not accept your token", true],
    ] as const) {
      const transport = new FakeTransport().on("sync.status", () => failed);
      render(
        <WithCtx ctx={makeCtx(transport, lang)}>
          <SyncIndicator onOpenSettings={() => undefined} />
        </WithCtx>,
      );
      fireEvent.click(await screen.findByTestId("sync-status"));
      const problem = screen.getByTestId("sync-problem").textContent ?? "";
      expect(problem).toContain(expected);
      // The server's own English words only under the English wording.
      expect(problem.includes("bearer token")).toBe(detail);
      cleanup();
    }
    // A code the UI does not know shows the English message as it is.
    const transport = new FakeTransport().on("sync.status", () => ({ ...failed, lastError: "418 TEAPOT: no", lastErrorCode: "TEAPOT" }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <SyncIndicator onOpenSettings={() => undefined} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("sync-status"));
    expect(screen.getByTestId("sync-problem").textContent).toBe("418 TEAPOT: no");
  });

  it("connects with URL and token, and asks before plain http to another machine", async () => {
    const transport = new FakeTransport()
      .on("sync.status", () => ({ ...connected, connected: false, state: "notConnected", jobs: [], conflicts: 0 }))
      .on("sync.connect", (params) => {
        if ((params as { token: string }).token === "bad") throw apiError("PERMISSION_DENIED", "The server did not accept this token.", [{ id: "new_invite", message: "Ask" }]);
        return { ...connected, state: "synced", conflicts: 0 };
      });
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <WorkspaceSync />
      </WithCtx>,
    );
    fireEvent.change(await screen.findByTestId("sync-url"), { target: { value: "http://192.168.1.5:8787" } });
    fireEvent.change(screen.getByTestId("sync-token"), { target: { value: "bad" } });
    expect(screen.getByTestId("sync-plain-http")).toBeTruthy();
    expect((screen.getByTestId("sync-connect") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("sync-allow-plain"));
    fireEvent.click(screen.getByTestId("sync-connect"));
    const banner = await screen.findByTestId("error-banner");
    expect(banner.textContent).toContain("请向工作区所有者索取新的邀请令牌");
    fireEvent.change(screen.getByTestId("sync-token"), { target: { value: "isk_good" } });
    fireEvent.click(screen.getByTestId("sync-connect"));
    await screen.findByTestId("sync-connection");
    expect(transport.callsTo("sync.connect")[1]).toEqual({ serverUrl: "http://192.168.1.5:8787", token: "isk_good", allowPlainHttp: true });
    expect((screen.getByTestId("sync-token") as HTMLInputElement).value).toBe("");
  });

  it("connecting asks for the person's name and offers to send the projects made before", async () => {
    let status: SyncStatus = { ...connected, connected: false, state: "notConnected", jobs: [], conflicts: 0, localOnlyProjects: 2, localOnlyVersions: 5 };
    const transport = new FakeTransport()
      .on("sync.status", () => status)
      .on("workspace.get", () => ({ id: "w", name: "w", displayName: "墨石", serverUrl: null, createdAt: "" }))
      .on("sync.connect", () => (status = { ...connected, state: "synced", conflicts: 0, jobs: [], localOnlyProjects: 0, localOnlyVersions: 0 }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <WorkspaceSync />
      </WithCtx>,
    );
    // The name colleagues will see, as it is now; the offer says how much would go.
    await waitFor(() => expect((screen.getByTestId("sync-display-name") as HTMLInputElement).value).toBe("墨石"));
    expect(screen.getByTestId("sync-upload-existing-row").textContent).toContain("2 个项目的 5 个版本");
    fireEvent.change(screen.getByTestId("sync-display-name"), { target: { value: "李墨" } });
    fireEvent.click(screen.getByTestId("sync-upload-existing"));
    fireEvent.change(screen.getByTestId("sync-url"), { target: { value: "https://team.example" } });
    fireEvent.change(screen.getByTestId("sync-token"), { target: { value: "isk_good" } });
    fireEvent.click(screen.getByTestId("sync-connect"));
    await screen.findByTestId("sync-connection");
    expect(transport.callsTo("sync.connect")).toEqual([{ serverUrl: "https://team.example", token: "isk_good", displayName: "李墨", uploadExisting: true }]);
    expect(screen.queryByTestId("sync-upload-existing")).toBeNull();
  });

  it("the sidebar and Settings show one state: connect, pause, offline and back, members read again", async () => {
    let status: SyncStatus = { ...connected, state: "notConnected", connected: false, conflicts: 0, jobs: [], workspaceName: undefined, memberName: undefined, role: undefined };
    let membersUp = true;
    const transport = new FakeTransport()
      .on("sync.status", () => status)
      .on("sync.connect", () => (status = { ...connected, state: "synced", conflicts: 0, jobs: [], lastContactAt: "t1" }))
      .on("sync.pause", () => (status = { ...status, state: "paused", paused: true }))
      .on("sync.resume", () => (status = { ...status, state: "synced", paused: false }))
      .on("sync.members", () => {
        if (!membersUp) throw apiError("OFFLINE", "The workspace server cannot be reached.");
        return { workspaceName: "团队", role: "editor", canManage: false, members: [{ memberId: "m1", name: "bob", role: "editor", tokens: [], revoked: false, me: true }] };
      })
      .on("project.list", () => ({ projects: [] }));
    const ctx = makeCtx(transport, "zh");
    render(
      <WithCtx ctx={ctx}>
        <SyncIndicator onOpenSettings={() => undefined} />
        <WorkspaceSync />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("sync-status").dataset.state).toBe("notConnected"));
    fireEvent.change(screen.getByTestId("sync-url"), { target: { value: "https://team.example" } });
    fireEvent.change(screen.getByTestId("sync-token"), { target: { value: "isk_good" } });
    fireEvent.click(screen.getByTestId("sync-connect"));
    // Both at once, without waiting for a poll; the role in the person's language.
    await waitFor(() => expect(screen.getByTestId("sync-status").textContent).toContain("已同步"));
    expect(screen.getByTestId("sync-connection").textContent).toContain("bob（编辑者）");
    expect(screen.getByTestId("sync-connection").textContent).not.toContain("editor");
    expect(screen.getByTestId("sync-connection-state").textContent).toBe("已同步");
    // Pausing in the popover shows in Settings; resuming in Settings shows in the sidebar.
    fireEvent.click(screen.getByTestId("sync-status"));
    fireEvent.click(screen.getByTestId("sync-toggle-pause"));
    await waitFor(() => expect(screen.getByTestId("sync-connection-state").textContent).toBe("同步已暂停"));
    fireEvent.click(screen.getByTestId("settings-sync-pause"));
    await waitFor(() => expect(screen.getByTestId("sync-status").dataset.state).toBe("synced"));
    // The server goes away: both say offline, and the members list cannot be read.
    membersUp = false;
    status = { ...status, state: "offline", offline: true, lastError: "the server could not be reached (connection refused or unreachable)", lastErrorCode: "UNREACHABLE" };
    await act(() => syncStoreFor(ctx.client).refresh());
    expect(screen.getByTestId("sync-status").dataset.state).toBe("offline");
    expect(screen.getByTestId("sync-connection-state").textContent).toBe("离线");
    expect(screen.getByTestId("settings-sync-problem").textContent).toContain("无法连接工作区服务器");
    // It is back: both say synced and the members list reads itself again.
    membersUp = true;
    status = { ...status, state: "synced", offline: false, lastError: undefined, lastErrorCode: undefined, lastContactAt: "t2" };
    await act(() => syncStoreFor(ctx.client).refresh());
    expect(screen.getByTestId("sync-connection-state").textContent).toBe("已同步");
    expect(screen.queryByTestId("settings-sync-problem")).toBeNull();
    await waitFor(() => expect(screen.getByTestId("sync-member-list").textContent).toContain("bob"));
  });

  it("counts performance data still to send, and says when the server keeps none", async () => {
    let status: SyncStatus = { ...connected, state: "synced", conflicts: 0, jobs: [], perfPending: 3 };
    const transport = new FakeTransport().on("sync.status", () => status).on("project.list", () => ({ projects: [] }));
    const ctx = makeCtx(transport, "en");
    render(
      <WithCtx ctx={ctx}>
        <SyncIndicator onOpenSettings={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("sync-status").dataset.state).toBe("synced"));
    fireEvent.click(screen.getByTestId("sync-status"));
    expect(screen.getByTestId("sync-perf").textContent).toBe("3 publication, account or metric records still to send.");
    status = { ...status, perfPending: 3, perfUnavailable: true };
    await act(() => syncStoreFor(ctx.client).refresh());
    expect(screen.getByTestId("sync-perf").textContent).toContain("keeps no performance data");
    expect(screen.queryByTestId("sync-perf-days")).toBeNull();
    expect(screen.queryByTestId("sync-perf-conflicts")).toBeNull();
    // A server from before account days: they stay here; a snapshot the server holds
    // otherwise is said too.
    status = { ...status, perfPending: 0, perfUnavailable: false, perfAccountDaysLocal: 1, perfConflicts: 2 };
    await act(() => syncStoreFor(ctx.client).refresh());
    expect(screen.getByTestId("sync-perf-days").textContent).toBe(
      "1 day of account followers stays on this computer: this workspace server is older than this app and keeps no account days.",
    );
    expect(screen.getByTestId("sync-perf-conflicts").textContent).toContain("2 snapshots differ from the server's copy");
  });

  it("the workspace's AI activity: an editor sees the list of their own, a viewer is told why there is none", async () => {
    for (const [role, lang] of [["editor", "en"], ["viewer", "en"], ["viewer", "zh"]] as const) {
      const asked: string[] = [];
      const transport = new FakeTransport()
        .on("sync.status", () => ({ ...connected, state: "synced", conflicts: 0, jobs: [], role }))
        .on("sync.members", () => ({ workspaceName: "团队", role, canManage: false, members: [] }))
        .on("sync.policy", () => ({ canSet: false, fresh: true, spent: { tokens: 0, costUsd: 0 } }))
        .on("aiActivity.list", (params) => {
          asked.push(JSON.stringify(params));
          return { rows: [], truncated: false };
        })
        .on("project.list", () => ({ projects: [] }));
      render(
        <WithCtx ctx={makeCtx(transport, lang)}>
          <WorkspaceSync />
        </WithCtx>,
      );
      await screen.findByTestId("sync-connection");
      if (role === "editor") {
        expect((await screen.findByTestId("workspace-ai-activity")).textContent).toContain("Your own accepted AI changes");
        await waitFor(() => expect(asked).toHaveLength(1));
        expect(JSON.parse(asked[0])).toMatchObject({ scope: "workspace" });
        expect(screen.queryByTestId("workspace-ai-activity-viewer")).toBeNull();
      } else {
        const said = (await screen.findByTestId("workspace-ai-activity-viewer")).textContent ?? "";
        expect(said).toContain(lang === "en" ? "you are a viewer" : "你是查看者");
        expect(screen.queryByTestId("workspace-ai-activity")).toBeNull();
        // A viewer's view asks the server nothing it would refuse.
        expect(asked).toEqual([]);
      }
      cleanup();
    }
  });

  it("Settings says a save at once and keeps unsent versions in sight after disconnecting", async () => {
    let status: SyncStatus = { ...connected, state: "synced", conflicts: 0, jobs: [] };
    const transport = new FakeTransport()
      .on("sync.status", () => status)
      .on("sync.members", () => ({ workspaceName: "团队", role: "owner", canManage: false, members: [] }))
      .on("sync.disconnect", () => {
        status = { ...status, state: "notConnected", connected: false, pending: 2, workspaceName: undefined };
        return { workspaceName: "团队", keptJobs: 2, status };
      })
      .on("project.list", () => ({ projects: [] }));
    const ctx = makeCtx(transport, "zh");
    render(
      <WithCtx ctx={ctx}>
        <SyncIndicator onOpenSettings={() => undefined} />
        <WorkspaceSync />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("sync-status").dataset.state).toBe("synced"));
    // A version saved while offline: the refresh the editor asks for shows it pending.
    status = { ...status, state: "pending", pending: 1 };
    await act(() => syncStoreFor(ctx.client).refresh());
    expect(screen.getByTestId("sync-status").textContent).toContain("1 个待同步");
    expect(screen.getByTestId("sync-connection-state").textContent).toBe("1 个待同步");
    fireEvent.click(screen.getByTestId("settings-sync-disconnect"));
    fireEvent.click(screen.getByTestId("settings-sync-disconnect-confirm"));
    await waitFor(() => expect(screen.getByTestId("sync-status").textContent).toContain("仅本地 · 2 个未发送"));
    expect(screen.getByTestId("sync-kept-jobs").textContent).toContain("2 个版本尚未发送到工作区");
  });

  it("the popover: a heading, project titles, unfinished and the last few finished jobs, sync now, Esc and a click outside", async () => {
    const job = (n: number, state: DeliveryJob["state"], projectId = "prj_1"): DeliveryJob => ({ ...connected.jobs[0], id: `job_${n}`, projectId, versionNumber: n, state });
    let status: SyncStatus = {
      ...connected,
      state: "pending",
      conflicts: 0,
      pending: 1,
      jobs: [job(9, { state: "retryWait", until: "" }, "prj_2"), ...[8, 7, 6, 5, 4].map((n) => job(n, { state: "finalized" }))],
    };
    const transport = new FakeTransport()
      .on("sync.status", () => status)
      .on("project.list", () => ({
        projects: [
          { id: "prj_1", title: "春天的信" },
          { id: "prj_2", title: "夏天的信" },
        ] as never,
      }))
      .on("sync.pull", () => ({ pushed: 0, pulled: 2, newConflicts: 0, status }))
      .on("sync.push", () => {
        status = { ...status, state: "synced", pending: 0, jobs: status.jobs.map((j) => ({ ...j, state: { state: "finalized" } })) };
        return { pushed: 1, pulled: 0, newConflicts: 0, status };
      })
      .on("sync.pause", () => {
        throw apiError("INTERNAL", "boom");
      });
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport, "en", { toast: (t) => toasts.push(t) })}>
        <SyncIndicator onOpenSettings={() => undefined} />
        <p data-testid="outside">elsewhere</p>
      </WithCtx>,
    );
    const trigger = await screen.findByText("1 pending");
    fireEvent.click(trigger);
    const popover = screen.getByTestId("sync-popover");
    expect(within(popover).getByRole("heading", { level: 3 }).textContent).toContain("Sync");
    await waitFor(() => expect(screen.getByTestId("sync-jobs").textContent).toContain("夏天的信 · v9"));
    expect(screen.getAllByTestId("sync-job")).toHaveLength(4); // 1 unfinished + the last 3 finished
    expect(screen.getByTestId("sync-jobs-done").textContent).toContain("春天的信 · v8 · on the server");
    expect(screen.getByTestId("sync-jobs-done").textContent).not.toContain("v5");
    // Sync now pulls, then pushes.
    fireEvent.click(screen.getByTestId("sync-now"));
    await waitFor(() => expect(toasts).toContain("Synced: 2 received, 1 sent"));
    expect(transport.calls.filter((c) => c.method === "sync.pull" || c.method === "sync.push").map((c) => c.method)).toEqual(["sync.pull", "sync.push"]);
    expect(screen.getByTestId("sync-status").dataset.state).toBe("synced");
    // A failed pause says so.
    fireEvent.click(screen.getByTestId("sync-toggle-pause"));
    expect((await within(popover).findByTestId("error-banner")).dataset.code).toBe("INTERNAL");
    // Esc with the focus on the trigger closes it (and gives the focus back).
    screen.getByTestId("sync-status").focus();
    fireEvent.keyDown(screen.getByTestId("sync-status"), { key: "Escape" });
    expect(screen.queryByTestId("sync-popover")).toBeNull();
    // A click outside closes it too.
    fireEvent.click(screen.getByTestId("sync-status"));
    expect(screen.getByTestId("sync-popover")).toBeTruthy();
    fireEvent.mouseDown(screen.getByTestId("outside"));
    expect(screen.queryByTestId("sync-popover")).toBeNull();
  });

  it("a window that regains focus syncs now, quietly: at most every few seconds, never while paused, nothing while idle", async () => {
    let status: SyncStatus = { ...connected, state: "synced", conflicts: 0, jobs: [] };
    const run = (pulled: number) => ({ pushed: 0, pulled, newConflicts: 0, status });
    const transport = new FakeTransport()
      .on("sync.status", () => status)
      .on("sync.pull", () => {
        status = { ...status, changes: status.changes + 1 };
        return run(1);
      })
      .on("sync.push", () => run(0));
    const toasts: string[] = [];
    const ctx = makeCtx(transport, "en", { toast: (t) => toasts.push(t) });
    render(
      <WithCtx ctx={ctx}>
        <SyncIndicator onOpenSettings={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("sync-status").dataset.state).toBe("synced"));
    const store = syncStoreFor(ctx.client);
    await act(() => store.refresh());
    expect(transport.callsTo("sync.pull")).toHaveLength(0);
    const changes = store.getSnapshot().changes;
    act(() => void window.dispatchEvent(new Event("focus")));
    await waitFor(() => expect(transport.callsTo("sync.push")).toHaveLength(1));
    expect(transport.callsTo("sync.pull")).toHaveLength(1);
    // What it brought is followed (the marker moved), and nothing is said.
    expect(store.getSnapshot().changes).toBeGreaterThan(changes);
    expect(toasts).toEqual([]);
    // Back again at once: no second sync.
    act(() => void window.dispatchEvent(new Event("focus")));
    await act(() => new Promise((r) => setTimeout(r, 20)));
    expect(transport.callsTo("sync.pull")).toHaveLength(1);
    const later = Date.now() + FOCUS_SYNC_MIN_MS;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => later);
    try {
      act(() => void window.dispatchEvent(new Event("focus")));
      await waitFor(() => expect(transport.callsTo("sync.pull")).toHaveLength(2));
      // Paused: focus syncs nothing.
      status = { ...status, state: "paused", paused: true };
      await act(() => store.refresh());
      clock.mockImplementation(() => later + 2 * FOCUS_SYNC_MIN_MS);
      act(() => void window.dispatchEvent(new Event("focus")));
      await act(() => new Promise((r) => setTimeout(r, 20)));
      expect(transport.callsTo("sync.pull")).toHaveLength(2);
    } finally {
      clock.mockRestore();
    }
  });

  it("says an unreachable server once, without the transport's words in brackets", async () => {
    const transport = new FakeTransport().on("sync.status", () => ({
      ...connected,
      state: "offline",
      conflicts: 0,
      offline: true,
      jobs: [],
      lastError: "the server could not be reached (connection refused or unreachable)",
      lastErrorCode: "UNREACHABLE",
    }));
    render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <SyncIndicator onOpenSettings={() => undefined} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByText("Offline"));
    const problem = screen.getByTestId("sync-problem").textContent ?? "";
    expect(problem).toContain("The workspace server could not be reached");
    expect(problem).not.toContain("(");
  });

  it("an old error goes when the URL or the token changes", async () => {
    const transport = new FakeTransport()
      .on("sync.status", () => ({ ...connected, connected: false, state: "notConnected", jobs: [], conflicts: 0 }))
      .on("sync.connect", () => {
        throw apiError("PERMISSION_DENIED", "The server did not accept this token.", [{ id: "new_invite", message: "Ask" }]);
      });
    render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <WorkspaceSync />
      </WithCtx>,
    );
    fireEvent.change(await screen.findByTestId("sync-url"), { target: { value: "https://team.example" } });
    fireEvent.change(screen.getByTestId("sync-token"), { target: { value: "bad" } });
    fireEvent.click(screen.getByTestId("sync-connect"));
    await screen.findByTestId("error-banner");
    fireEvent.change(screen.getByTestId("sync-url"), { target: { value: "http://192.168.1.5:8787" } });
    expect(screen.getByTestId("sync-plain-http")).toBeTruthy();
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });

  it("a failed version says why in the person's language and can be sent again; the ones behind it say so", async () => {
    const failedJob: DeliveryJob = { ...connected.jobs[0], id: "job_2", versionNumber: 2, state: { state: "failed" }, attempts: 8, lastError: "403 FORBIDDEN: viewers cannot push", lastErrorCode: "FORBIDDEN" };
    const held: DeliveryJob = { ...connected.jobs[0], id: "job_3", versionNumber: 3, state: { state: "pending" } };
    let status: SyncStatus = { ...connected, state: "failed", conflicts: 0, failed: 1, pending: 1, jobs: [held, failedJob], heldBy: { job_3: "job_2" } };
    const transport = new FakeTransport()
      .on("sync.status", () => status)
      .on("project.list", () => ({ projects: [{ id: "prj_1", title: "春天的信" }] as never }))
      .on("sync.retry", () => (status = { ...status, state: "pending", failed: 0, pending: 2, heldBy: {}, jobs: [held, { ...failedJob, state: { state: "pending" } }] }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <SyncIndicator onOpenSettings={() => undefined} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByText("同步失败"));
    expect(screen.getByTestId("sync-job-reason").textContent).toContain("你在此工作区的角色不能推送版本");
    expect(screen.getByTestId("sync-job-held").textContent).toContain("等第 2 版先发送");
    fireEvent.click(screen.getByTestId("sync-retry"));
    await waitFor(() => expect(transport.callsTo("sync.retry")).toEqual([{ jobId: "job_2" }]));
    await waitFor(() => expect(screen.getByTestId("sync-status").textContent).toContain("2 个待同步"));
    expect(screen.queryByTestId("sync-retry")).toBeNull();
  });
});
