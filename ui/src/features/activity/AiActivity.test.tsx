import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { ActivityRow, AiActivityListParams, ProposalView } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { AiActivity, toFilter } from "./AiActivity";

afterEach(() => cleanup());
beforeEach(() => {
  URL.createObjectURL = vi.fn(() => "blob:csv");
  URL.revokeObjectURL = vi.fn();
});

const row = (over: Partial<ActivityRow>): ActivityRow => ({
  id: "aud_1",
  at: "2026-11-22T10:00:00Z",
  source: { type: "local" },
  projectId: "prj_1",
  projectTitle: "春晓",
  proposalId: "prp_1",
  decision: "accepted",
  partial: false,
  hunks: ["hk_a"],
  nHunks: 1,
  actor: "Lin",
  through: { type: "draftingSession", sessionId: "ses_1" },
  model: { profileId: "llm_1", profileName: "DeepSeek", providerHost: "api.deepseek.com", model: "deepseek-chat" },
  promptLayers: ["core-identity@v1", "mode.drafting@v1"],
  contextSnapshotId: "sha256:abc",
  tokens: { calls: 1, inputTokens: 1200, outputTokens: 300, estimated: false, cost: 0.0021, scope: "turn" },
  version: 3,
  ...over,
});

const ROWS: ActivityRow[] = [
  row({ id: "aud_3", proposalId: "prp_3", through: { type: "applyProposal", sessionId: "ses_1", approvalRequestId: "apr_1" }, version: 4 }),
  row({ id: "aud_2", proposalId: "prp_2", decision: "rejected", version: undefined, reason: "不要改标题", hunks: [] }),
  row({ id: "aud_1", proposalId: "prp_1", through: { type: "optimizeRun", runId: "run_1" }, tokens: { calls: 4, inputTokens: 9000, outputTokens: 2000, estimated: false, scope: "run" } }),
];

const hunk = (id: string, oldText: string, newText: string) => ({
  id,
  contentHash: `sha256:${id}`,
  oldStart: 0,
  oldLen: 1,
  newStart: 0,
  newLen: 1,
  oldText,
  newText,
  display: {
    oldStart: 1,
    oldLen: 1,
    newStart: 1,
    newLen: 1,
    lines: [
      { kind: "delete" as const, oldLine: 1, segments: [{ text: oldText, emphasized: false }] },
      { kind: "insert" as const, newLine: 1, segments: [{ text: newText, emphasized: false }] },
    ],
  },
});

function transport(rows: ActivityRow[] = ROWS) {
  return new FakeTransport()
    .on("aiActivity.list", (p: AiActivityListParams) => ({ rows: p.filter?.decision ? rows.filter((r) => r.decision === p.filter?.decision) : rows, truncated: false }))
    .on("project.list", () => ({ projects: [] }) as never)
    .on("proposal.get", (p) => ({ id: p.proposalId, hunks: [hunk("hk_a", "花落知多少", "花落知几多"), hunk("hk_b", "处处闻啼鸟", "处处闻鸟啼")] }) as unknown as ProposalView)
    .on("aiActivity.export", () => ({ csv: "\ufeffat,project_id\n", nRows: 3 }));
}

function renderView(tr: FakeTransport, lang: Lang = "en", projectId?: string) {
  const toasts: string[] = [];
  render(
    <WithCtx ctx={makeCtx(tr, lang, { toast: (t) => toasts.push(t) })}>
      <AiActivity projectId={projectId} />
    </WithCtx>,
  );
  return { toasts };
}

describe("AI activity", () => {
  it("reads the workspace's shared activity when asked, showing a teammate's change without a local diff", async () => {
    const synced = row({
      id: "ver_9",
      source: { type: "synced", pushedBy: "Bea", serverNumber: 7 },
      actor: "Bea",
      version: undefined,
      hunks: [],
      nHunks: 2,
      nHunksTotal: 2,
      tokens: undefined,
      contextSnapshotId: undefined,
      model: { profileId: "", providerHost: "127.0.0.1", model: "fake-model" },
    });
    const tr = transport([synced]);
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(tr, "zh", { toast: (t) => toasts.push(t) })}>
        <AiActivity scope="workspace" />
      </WithCtx>,
    );
    const rows = await screen.findAllByTestId("ai-activity-row");
    expect(tr.callsTo("aiActivity.list")).toEqual([{ filter: {}, limit: 500, scope: "workspace" }]);
    expect(rows[0].textContent).toContain("服务器第 7 版");
    expect(within(rows[0]).getByTestId("row-actor").textContent).toContain("Bea");
    expect(within(rows[0]).getByTestId("row-model").textContent).toBe("fake-model@127.0.0.1");
    fireEvent.click(rows[0]);
    expect((await screen.findByTestId("ai-activity-synced")).textContent).toContain("prp_1");
    expect(tr.callsTo("proposal.get")).toEqual([]);
    fireEvent.click(screen.getByTestId("ai-activity-export"));
    await waitFor(() => expect(tr.callsTo("aiActivity.export")).toEqual([{ filter: {}, scope: "workspace" }]));
  });

  it("lists each change with its decision, model, through what, tokens and reason", async () => {
    const tr = transport();
    renderView(tr, "en", "prj_1");
    const rows = await screen.findAllByTestId("ai-activity-row");
    expect(rows).toHaveLength(3);
    expect(tr.callsTo("aiActivity.list")).toEqual([{ filter: { projectId: "prj_1" }, limit: 500 }]);
    expect(rows[0].textContent).toContain("Applied by the assistant after approval");
    expect(rows[0].textContent).toContain("Version 4");
    expect(within(rows[0]).getByTestId("row-model").textContent).toBe("deepseek-chat@api.deepseek.com (DeepSeek)");
    expect(rows[1].textContent).toContain("Rejected");
    expect(within(rows[1]).getByTestId("row-reason").textContent).toBe("Reason: 不要改标题");
    expect(rows[2].textContent).toContain("Optimize run");
    expect(rows[2].textContent).toContain("9,000 in · 2,000 out (whole run)");
    // Per project, no project filter.
    expect(screen.queryByTestId("filter-project")).toBeNull();
  });

  it("moves with the arrow keys and opens the selected change's diff with Enter, closing it with Escape", async () => {
    const tr = transport();
    renderView(tr);
    const list = await screen.findByTestId("ai-activity-list");
    const selected = () => screen.getAllByTestId("ai-activity-row").findIndex((r) => r.getAttribute("aria-selected") === "true");
    expect(selected()).toBe(0);
    fireEvent.keyDown(list, { key: "ArrowDown" });
    fireEvent.keyDown(list, { key: "ArrowDown" });
    fireEvent.keyDown(list, { key: "ArrowDown" });
    expect(selected()).toBe(2);
    fireEvent.keyDown(list, { key: "ArrowUp" });
    expect(selected()).toBe(1);
    expect(list.getAttribute("aria-activedescendant")).toBe(screen.getAllByTestId("ai-activity-row")[1].id);
    fireEvent.keyDown(list, { key: "Home" });
    expect(selected()).toBe(0);
    fireEvent.keyDown(list, { key: "Enter" });
    const diff = await screen.findByTestId("ai-activity-diff");
    expect(tr.callsTo("proposal.get")).toEqual([{ proposalId: "prp_3" }]);
    // Only the hunks the decision covered.
    expect(diff.textContent).toContain("花落知几多");
    expect(diff.textContent).not.toContain("处处闻鸟啼");
    expect(diff.textContent).toContain("Prompt layers: core-identity@v1, mode.drafting@v1");
    fireEvent.keyDown(list, { key: "Escape" });
    expect(screen.queryByTestId("ai-activity-diff")).toBeNull();
    // A whole rejection names no hunks: every hunk is shown.
    fireEvent.keyDown(list, { key: "ArrowDown" });
    fireEvent.keyDown(list, { key: "Enter" });
    const rejected = await screen.findByTestId("ai-activity-diff");
    expect(rejected.textContent).toContain("处处闻鸟啼");
  });

  it("filters through the engine and says when nothing matches, with a way back", async () => {
    const tr = transport();
    renderView(tr);
    await screen.findAllByTestId("ai-activity-row");
    fireEvent.change(screen.getByTestId("filter-decision"), { target: { value: "rejected" } });
    await waitFor(() => expect(screen.getAllByTestId("ai-activity-row")).toHaveLength(1));
    expect(tr.callsTo("aiActivity.list").at(-1)).toEqual({ filter: { decision: "rejected" }, limit: 500 });
    fireEvent.change(screen.getByTestId("filter-model"), { target: { value: "nobody" } });
    tr.on("aiActivity.list", () => ({ rows: [], truncated: false }));
    fireEvent.change(screen.getByTestId("filter-person"), { target: { value: "  Lin " } });
    await screen.findByTestId("ai-activity-nomatch");
    expect(tr.callsTo("aiActivity.list").at(-1)).toEqual({ filter: { decision: "rejected", model: "nobody", person: "Lin" }, limit: 500 });
    expect(toFilter({ projectId: "", person: "", model: "", from: "2026-11-01", to: "2026-11-22", decision: "" })).toEqual({
      from: "2026-11-01T00:00:00Z",
      to: "2026-11-23T00:00:00.000Z",
    });
  });

  it("teaches when empty, shows loading, and an error with a retry", async () => {
    let fail = true;
    const tr = new FakeTransport().on("project.list", () => ({ projects: [] }) as never).on("aiActivity.list", () => {
      if (fail) throw apiError("STORE_CORRUPT", "broken");
      return { rows: [], truncated: false };
    });
    renderView(tr, "zh");
    expect(screen.getByTestId("ai-activity-loading").textContent).toContain("正在加载 AI 活动");
    const retry = await screen.findByRole("button", { name: /重试|Retry/ });
    fail = false;
    fireEvent.click(retry);
    const empty = await screen.findByTestId("ai-activity-empty");
    expect(empty.textContent).toContain("还没有 AI 修改");
    expect((screen.getByTestId("ai-activity-export") as HTMLButtonElement).disabled).toBe(true);
  });

  it("exports the filtered rows as CSV through the engine", async () => {
    const tr = transport();
    const { toasts } = renderView(tr, "zh");
    await screen.findAllByTestId("ai-activity-row");
    fireEvent.change(screen.getByTestId("filter-decision"), { target: { value: "accepted" } });
    await waitFor(() => expect(screen.getAllByTestId("ai-activity-row")).toHaveLength(2));
    fireEvent.click(screen.getByTestId("ai-activity-export"));
    await waitFor(() => expect(toasts).toEqual(["已导出 3 条 AI 修改"]));
    expect(tr.callsTo("aiActivity.export")).toEqual([{ filter: { decision: "accepted" } }]);
    expect(URL.createObjectURL).toHaveBeenCalledTimes(1);
  });
});
