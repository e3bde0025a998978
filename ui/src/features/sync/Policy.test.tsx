import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { PolicyStanding } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { WorkspacePolicy } from "./Policy";

afterEach(cleanup);

const set: PolicyStanding = {
  policy: {
    workspaceId: "wsp_1",
    workspaceName: "团队",
    policy: { providers: { kind: "local" }, performanceContext: false, monthlyCapUsd: 5, shareActivity: true },
    setBy: "Olga",
    setAt: "2026-11-20T09:00:00Z",
    fetchedAt: "2026-11-27T09:00:00Z",
  },
  canSet: false,
  fresh: true,
  spent: { tokens: 1200, costUsd: 1.25 },
};

describe("workspace policy", () => {
  it("shows an editor the policy read-only, with who set it and their standing, and no controls", async () => {
    const transport = new FakeTransport().on("sync.policy", () => set);
    render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <WorkspacePolicy />
      </WithCtx>,
    );
    const readOnly = await screen.findByTestId("sync-policy-readonly");
    expect(screen.getByTestId("sync-policy-setby").textContent).toContain("Set by Olga on 2026-11-20");
    expect(screen.getByTestId("sync-policy-providers").textContent).toBe("Local only (a server on this computer)");
    expect(screen.getByTestId("sync-policy-cap").textContent).toBe("5.00 USD; you spent 1.25 USD this month");
    expect(readOnly.textContent).toContain("Off");
    expect(screen.queryByTestId("sync-policy-form")).toBeNull();
    expect(screen.queryByTestId("sync-policy-save")).toBeNull();
  });

  it("says offline that the policy shown is the last one seen, in Chinese too", async () => {
    const transport = new FakeTransport().on("sync.policy", () => ({ ...set, fresh: false }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <WorkspacePolicy />
      </WithCtx>,
    );
    const line = await screen.findByTestId("sync-policy-setby");
    expect(line.textContent).toContain("由 Olga 于 2026-11-20 设定");
    expect(line.textContent).toContain("最后一次看到的策略");
  });

  it("lets an owner change the policy and sends it whole", async () => {
    const sent: unknown[] = [];
    const transport = new FakeTransport()
      .on("sync.policy", () => ({ ...set, canSet: true }))
      .on("sync.setPolicy", (params) => {
        sent.push(params);
        return { ...set, canSet: true };
      });
    render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <WorkspacePolicy />
      </WithCtx>,
    );
    const kind = await screen.findByTestId("sync-policy-kind");
    fireEvent.change(kind, { target: { value: "hosts" } });
    fireEvent.change(screen.getByTestId("sync-policy-hosts"), { target: { value: "api.example.com, llm.corp" } });
    fireEvent.change(screen.getByTestId("sync-policy-cap-input"), { target: { value: "" } });
    fireEvent.click(screen.getByTestId("sync-policy-save"));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toEqual({ providers: { kind: "hosts", hosts: ["api.example.com", "llm.corp"] }, performanceContext: false, shareActivity: true, monthlyCapUsd: undefined });
  });
});
