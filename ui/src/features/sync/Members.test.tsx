import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { SyncMember, SyncMembersResult, SyncStatus } from "../../shared/api/generated";
import { makeCtx, WithAppErrors, WithCtx } from "../../shared/testing/utils";
import { WorkspaceMembers } from "./Members";
import { WorkspaceSync } from "./Workspace";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const olga: SyncMember = {
  memberId: "mem_o",
  name: "Olga",
  role: "owner",
  tokenId: "tok_o",
  tokens: [{ tokenId: "tok_o", revoked: false, issuedAt: "2026-11-01T10:00:00Z" }],
  joinedAt: "2026-11-01T10:00:00Z",
  revoked: false,
  me: true,
  tokenFingerprint: "…9f3a",
};
const eddie: SyncMember = {
  memberId: "mem_e",
  name: "eddie",
  role: "editor",
  tokenId: "tok_e",
  tokens: [{ tokenId: "tok_e", revoked: false, issuedAt: "2026-11-02T10:00:00Z" }],
  joinedAt: "2026-11-02T10:00:00Z",
  revoked: false,
  me: false,
};
const owned: SyncMembersResult = { workspaceName: "团队", role: "owner", canManage: true, members: [olga, eddie] };

describe("workspace members", () => {
  it("lets an owner invite (the token shown once, copyable) and revoke after a confirmation", async () => {
    const vera: SyncMember = { memberId: "mem_v", name: "维拉", role: "viewer", tokenId: "tok_v", tokens: [{ tokenId: "tok_v", revoked: false }], revoked: false, me: false };
    let members = owned.members;
    const transport = new FakeTransport()
      .on("sync.members", () => ({ ...owned, members }))
      .on("sync.invite", () => {
        members = [...members, vera];
        return { member: vera, token: "isk_0123456789abcdef" };
      })
      .on("sync.revokeMember", () => ({ ...owned, members: members.map((m) => (m.memberId === "mem_e" ? { ...m, revoked: true } : m)) }));
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport, "en", { toast: (t) => toasts.push(t) })}>
        <WorkspaceMembers />
      </WithCtx>,
    );
    const list = await screen.findByTestId("sync-member-list");
    expect(list.textContent).toContain("Olga (you)");
    expect(list.textContent).toContain("tok_e");
    expect(list.textContent).toContain("joined 2026-11-02");
    // No revoke button for the person's own membership.
    expect(screen.queryByTestId("sync-revoke-mem_o")).toBeNull();

    expect((screen.getByTestId("sync-invite") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByTestId("sync-invite-name"), { target: { value: " 维拉 " } });
    fireEvent.change(screen.getByTestId("sync-invite-role"), { target: { value: "viewer" } });
    fireEvent.click(screen.getByTestId("sync-invite"));
    expect((await screen.findByTestId("sync-invite-token-value")).textContent).toBe("isk_0123456789abcdef");
    expect(transport.callsTo("sync.invite")).toEqual([{ name: "维拉", role: "viewer" }]);
    expect(screen.getByTestId("sync-invite-token").textContent).toContain("Shown this once");
    fireEvent.click(screen.getByTestId("sync-invite-copy"));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith("isk_0123456789abcdef"));
    await waitFor(() => expect(screen.getByTestId("sync-member-list").textContent).toContain("维拉"));
    fireEvent.click(screen.getByTestId("sync-invite-done"));
    expect(screen.queryByTestId("sync-invite-token")).toBeNull();
    expect(document.body.textContent).not.toContain("isk_0123456789abcdef");

    // Revoking asks first; cancelling sends nothing.
    fireEvent.click(screen.getByTestId("sync-revoke-mem_e"));
    expect(screen.getByRole("group").textContent).toContain("Revoke eddie’s access?");
    fireEvent.click(screen.getByText("Cancel"));
    expect(transport.callsTo("sync.revokeMember")).toEqual([]);
    fireEvent.click(screen.getByTestId("sync-revoke-mem_e"));
    // The confirmation is a button that looks dangerous, not a link.
    expect(screen.getByTestId("sync-revoke-mem_e-confirm").className).toBe("danger");
    fireEvent.click(screen.getByTestId("sync-revoke-mem_e-confirm"));
    await waitFor(() => expect(transport.callsTo("sync.revokeMember")).toEqual([{ tokenId: "tok_e" }]));
    await waitFor(() => expect(screen.getByTestId("sync-member-mem_e").textContent).toContain("revoked"));
    expect(screen.queryByTestId("sync-revoke-mem_e")).toBeNull();
    expect(toasts).toContain("Revoked eddie’s token");
  });

  it("shows an editor the list without the owner's controls", async () => {
    const transport = new FakeTransport().on("sync.members", () => ({
      ...owned,
      role: "editor",
      canManage: false,
      members: [{ ...olga, me: false, tokenFingerprint: undefined }, { ...eddie, me: true }],
    }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <WorkspaceMembers />
      </WithCtx>,
    );
    await screen.findByTestId("sync-member-list");
    expect(screen.queryByTestId("sync-invite-form")).toBeNull();
    expect(screen.queryByTestId("sync-revoke-mem_o")).toBeNull();
    expect(screen.getByTestId("sync-members").textContent).toContain("只有所有者可以邀请和撤销成员");
  });

  it("shows the server's refusal with its hint in the app's one banner and keeps the form", async () => {
    const transport = new FakeTransport().on("sync.members", () => owned).on("sync.invite", () => {
      throw apiError("PERMISSION_DENIED", "Only a workspace owner can invite members.", [{ id: "owner_only", message: "Ask an owner." }]);
    });
    render(
      <WithAppErrors ctx={makeCtx(transport, "zh")}>
        <WorkspaceMembers />
      </WithAppErrors>,
    );
    fireEvent.change(await screen.findByTestId("sync-invite-name"), { target: { value: "mallory" } });
    fireEvent.click(screen.getByTestId("sync-invite"));
    expect((await within(screen.getByTestId("app-error")).findByTestId("error-banner")).textContent).toContain("只有工作区所有者可以执行此操作");
    expect(within(screen.getByTestId("under-test")).queryByTestId("error-banner")).toBeNull();
    expect(screen.queryByTestId("sync-invite-token")).toBeNull();
    expect((screen.getByTestId("sync-invite-name") as HTMLInputElement).value).toBe("mallory");
  });

  it("a failed revoke goes to the app's one banner, and the member stays listed", async () => {
    const transport = new FakeTransport().on("sync.members", () => owned).on("sync.revokeMember", () => {
      throw apiError("OFFLINE", "The sync server cannot be reached.", []);
    });
    render(
      <WithAppErrors ctx={makeCtx(transport, "en")}>
        <WorkspaceMembers />
      </WithAppErrors>,
    );
    fireEvent.click(await screen.findByTestId("sync-revoke-mem_e"));
    fireEvent.click(screen.getByTestId("sync-revoke-mem_e-confirm"));
    expect((await within(screen.getByTestId("app-error")).findByTestId("error-banner")).dataset.code).toBe("OFFLINE");
    expect(within(screen.getByTestId("under-test")).queryByTestId("error-banner")).toBeNull();
    expect(screen.getByTestId("sync-member-mem_e").textContent).not.toContain("revoked");
  });

  it("disconnects after a confirmation and says how many versions were kept", async () => {
    const status: SyncStatus = {
      state: "pending",
      connected: true,
      paused: false,
      serverUrl: "https://team.example",
      workspaceName: "团队",
      memberName: "Olga",
      role: "owner",
      tokenFingerprint: "…9f3a",
      pending: 2,
      perfPending: 0,
      perfUnavailable: false,
      perfAccountDaysLocal: 0,
      perfConflicts: 0,
      localOnlyProjects: 0,
      localOnlyVersions: 0,
      failed: 0,
      conflicts: 0,
      offline: false,
      changes: 0,
      localChanges: 0,
      asOf: 0,
      sessionActivity: 0,
      jobs: [],
    };
    const transport = new FakeTransport()
      .on("sync.status", () => status)
      .on("sync.members", () => owned)
      .on("sync.disconnect", () => ({ workspaceName: "团队", keptJobs: 2, status: { ...status, state: "notConnected", connected: false, paused: true } }));
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport, "en", { toast: (t) => toasts.push(t) })}>
        <WorkspaceSync />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("settings-sync-disconnect"));
    expect(transport.callsTo("sync.disconnect")).toEqual([]);
    expect(screen.getByRole("group").textContent).toContain("Disconnect this device from “团队”?");
    fireEvent.click(screen.getByTestId("settings-sync-disconnect-confirm"));
    await waitFor(() => expect(transport.callsTo("sync.disconnect")).toEqual([{}]));
    await waitFor(() => expect(screen.queryByTestId("sync-connection")).toBeNull());
    expect(screen.queryByTestId("sync-members")).toBeNull();
    expect(toasts).toContain("Disconnected. 2 versions not yet on the server are kept, paused.");
  });
});

describe("revoking in Chinese", () => {
  it("says 撤销 everywhere (never 吊销) and asks with a full-width question mark", async () => {
    const { zh } = await import("../../shared/i18n/zh");
    expect(Object.values(zh).filter((v) => v.includes("吊销"))).toEqual([]);
    expect(zh["sync.revokeConfirm"]).toMatch(/撤销.*？$/);
  });
});
