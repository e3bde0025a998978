import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { apiError, FakeTransport } from "../api/fake";
import type { SyncConflict, SyncStatus } from "../api/generated";
import { WorkspaceSync } from "../settings/Workspace";
import { makeCtx, WithCtx } from "../test-utils";
import { SyncIndicator } from "./SyncIndicator";

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
  failed: 0,
  conflicts: 1,
  offline: false,
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

const conflict: SyncConflict = {
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
};

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
    const button = await screen.findByText("1 conflict(s)");
    fireEvent.click(button);
    expect(screen.getByTestId("sync-jobs").textContent).toContain("conflict");
    fireEvent.click(await screen.findByTestId("sync-open-conflict"));
    // Overlapping edits: no automatic merge, the person edits the result.
    expect(screen.queryByTestId("conflict-merged")).toBeNull();
    expect(screen.getByTestId("conflict-overlaps").textContent).toContain("1 place");
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
});
