import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { VersionSummary } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { HistoryPanel } from "./HistoryPanel";

function versions(n: number): VersionSummary[] {
  return Array.from({ length: n }, (_, i) => {
    const number = n - i;
    return {
      id: `ver_${number}`,
      number,
      title: "T",
      author: "Lin",
      message: number === 3 ? "第三稿" : null,
      origin: number === 2 ? { type: "restore", from: 1 } : { type: "manual" },
      contentHash: "sha256:x",
      createdAt: "2026-11-22T11:00:00Z",
      nChars: 10,
    };
  });
}

afterEach(() => cleanup());

describe("HistoryPanel", () => {
  it("opens the project's AI activity in its place and goes back to the versions", async () => {
    const transport = new FakeTransport()
      .on("version.list", () => ({ versions: versions(1) }))
      .on("aiActivity.list", () => ({ rows: [], truncated: false }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <HistoryPanel projectId="prj_7" head={1} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("history-ai-activity"));
    await screen.findByTestId("ai-activity-empty");
    expect(transport.callsTo("aiActivity.list")).toEqual([{ filter: { projectId: "prj_7" }, limit: 500 }]);
    fireEvent.click(screen.getByTestId("history-versions"));
    await screen.findByTestId("version-list");
  });

  it("shows number, message, author and origin, and wires the actions", async () => {
    const transport = new FakeTransport().on("version.list", () => ({ versions: versions(3) }));
    const seen: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <HistoryPanel
          projectId="p"
          head={3}
          onView={(n) => seen.push(`view ${n}`)}
          onDiff={(f, t) => seen.push(`diff ${f} ${t}`)}
          onRestore={(n) => seen.push(`restore ${n}`)}
        />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(3));
    const first = screen.getAllByTestId("version-item")[0];
    expect(first.textContent).toContain("v3");
    expect(first.textContent).toContain("第三稿");
    expect(first.textContent).toContain("Lin");
    expect(screen.getAllByTestId("version-item")[1].textContent).toContain("restored from v1");
    fireEvent.click(screen.getAllByTestId("version-diff")[0]);
    fireEvent.click(screen.getAllByTestId("version-restore")[1]);
    expect(seen).toEqual(["diff 3 null", "restore 2"]);
  });

  it("a checkpoint restore's message, which the core writes in English, is said in the person's language", async () => {
    const restored = (number: number, message: string | null): VersionSummary => ({
      id: `ver_${number}`,
      number,
      title: "T",
      author: "Lin",
      message,
      origin: { type: "checkpoint", checkpointId: `chk_${number}` },
      contentHash: "sha256:x",
      createdAt: "2026-11-22T11:00:00Z",
      nChars: 10,
    });
    const transport = new FakeTransport().on("version.list", () => ({
      versions: [restored(3, 'Restored checkpoint "Before a turn that made 2 proposals"'), restored(2, 'Restored checkpoint "手动保存，上午"'), restored(1, "Restored checkpoint")],
    }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <HistoryPanel projectId="p" head={3} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(3));
    const messages = screen.getAllByTestId("version-item").map((i) => i.querySelector(".version-msg")?.textContent);
    expect(messages).toEqual(["恢复了检查点“产生 2 条建议的一轮开始前” · Lin", "恢复了检查点“手动保存，上午” · Lin", "恢复了一个检查点 · Lin"]);
    expect(screen.getAllByTestId("version-item")[0].querySelector(".version-msg")?.getAttribute("title")).toBe("恢复了检查点“产生 2 条建议的一轮开始前”");
  });

  it("the messages the core wrote are worded from their id and values, whatever the English says", async () => {
    const v = (number: number, origin: VersionSummary["origin"], message: string, messageId: string, messageParams: Record<string, string>): VersionSummary => ({
      id: `ver_${number}`,
      number,
      title: "T",
      author: "Lin",
      message: `${message} (English the UI no longer reads)`,
      messageId,
      messageParams,
      origin,
      contentHash: "sha256:x",
      createdAt: "2026-11-22T11:00:00Z",
      nChars: 10,
    });
    const auto = { type: "autosnapshot" } as const;
    const checkpoint = { type: "checkpoint", checkpointId: "chk_1" } as const;
    const staged = { type: "aiProposal", proposalId: "prp_1", sessionId: "ses_1", model: "m" } as VersionSummary["origin"];
    const list = [
      v(7, staged, "Applied 2 staged AI proposals", "applied_staged", { count: "2", summaries: "改开头; 加结尾" }),
      v(6, checkpoint, "Restored checkpoint", "restored_checkpoint", { label: "Before a turn that made 3 proposals", labelId: "turn_before", proposals: "3" }),
      v(5, auto, "Unsaved changes kept before restoring checkpoint", "autosnapshot_before_checkpoint", { label: "上午的稿子" }),
      v(4, auto, "Unsaved changes kept before restoring checkpoint", "autosnapshot_before_checkpoint_unnamed", {}),
      v(3, { type: "restore", from: 1 }, "Restored version 1", "restored_version", { n: "1" }),
      v(2, auto, "Unsaved changes kept before restoring version 1", "autosnapshot_before_restore", { n: "1" }),
    ];
    const transport = new FakeTransport().on("version.list", () => ({ versions: list }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <HistoryPanel projectId="p" head={7} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(6));
    const messages = screen.getAllByTestId("version-item").map((i) => i.querySelector(".version-msg")?.getAttribute("title"));
    expect(messages).toEqual([
      "应用了 2 个暂存的 AI 提议：改开头; 加结尾",
      "恢复了检查点“产生 3 条建议的一轮开始前”",
      "恢复检查点“上午的稿子”前自动保留的未保存内容",
      "恢复检查点前自动保留的未保存内容",
      "第 1 版的内容",
      "恢复第 1 版前自动保留的未保存内容",
    ]);
    expect(screen.getByTestId("version-list").textContent).not.toMatch(/Restored|Unsaved|Applied|English/);
  });

  it("virtualises 1,000 versions", async () => {
    const transport = new FakeTransport().on("version.list", () => ({ versions: versions(1000) }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <HistoryPanel projectId="p" head={1000} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item").length).toBeGreaterThan(0));
    const rendered = screen.getAllByTestId("version-item").length;
    expect(rendered).toBeLessThan(30);
    const list = screen.getByTestId("version-list");
    list.scrollTop = 88 * 500;
    fireEvent.scroll(list);
    await waitFor(() => expect(screen.getAllByTestId("version-item").some((e) => e.dataset.number === "500")).toBe(true));
    expect(screen.getAllByTestId("version-item").length).toBeLessThan(30);
  });

  it("teaches when there is no version yet", async () => {
    const transport = new FakeTransport().on("version.list", () => ({ versions: [] }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <HistoryPanel projectId="p" head={0} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("history-empty").textContent).toContain("Ctrl+S"));
  });

  it("says whose a pulled version is and marks a resolution, in the person's language", async () => {
    const base = versions(1)[0];
    const list: VersionSummary[] = [
      { ...base, id: "v4", number: 4, author: "Boris", message: "Unsaved changes kept before resolving a sync conflict", origin: { type: "autosnapshot" } },
      { ...base, id: "v3", number: 3, author: "Boris", message: "Resolved a sync conflict", origin: { type: "syncResolution", conflictId: "cnf_1" } },
      { ...base, id: "v2", number: 2, author: "Olga", message: "加了第四段", origin: { type: "pulled", serverNumber: 7, pushedBy: "mem_o" } },
    ];
    const transport = new FakeTransport().on("version.list", () => ({ versions: list }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <HistoryPanel projectId="p" head={4} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(3));
    const [snapshot, resolution, pulled] = screen.getAllByTestId("version-item");
    expect(pulled.querySelector(".badge")!.textContent).toBe("来自 Olga · 服务器第 7 版");
    expect(pulled.textContent).not.toContain("手动保存");
    expect(pulled.textContent).toContain("加了第四段");
    expect(resolution.querySelector(".badge")!.textContent).toBe("解决同步冲突");
    // The core's English messages are said in Chinese.
    expect(resolution.querySelector(".version-msg")!.textContent).toBe("解决了一个同步冲突 · Boris");
    expect(snapshot.querySelector(".version-msg")!.textContent).toBe("解决同步冲突前自动保留的未保存内容 · Boris");
  });
  it("opens “Why this change?” from an AI version and lists what the model read, in Chinese too", async () => {
    const ai: VersionSummary = {
      id: "ver_2",
      number: 2,
      title: "T",
      author: "Lin",
      message: "写明采摘时节",
      origin: { type: "aiProposal", proposalId: "prp_9", model: "m", profileId: "llm_1", sources: [{ type: "memory", memoryId: "mem_1", text: "写明采摘时节" }] },
      contentHash: "sha256:x",
      createdAt: "2026-11-22T11:00:00Z",
      nChars: 10,
    };
    const asked: unknown[] = [];
    const transport = new FakeTransport()
      .on("version.list", () => ({ versions: [ai, { ...ai, id: "ver_1", number: 1, origin: { type: "manual" } }] }))
      .on("proposal.why", (p) => {
        asked.push(p);
        return { proposalId: "prp_9", sources: [{ source: { type: "memory", memoryId: "mem_1", text: "提到茶叶时写明采摘时节" }, hunkIds: ["hk_1"] }] };
      });
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <HistoryPanel projectId="p" head={2} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(2));
    expect(screen.getAllByTestId("version-why")).toHaveLength(1);
    fireEvent.click(screen.getByTestId("version-why"));
    await waitFor(() => expect(screen.getAllByTestId("why-source")).toHaveLength(1));
    expect(asked).toEqual([{ proposalId: "prp_9" }]);
    expect(screen.getByTestId("history-why").textContent).toContain("记忆");
    expect(screen.getByTestId("history-why").textContent).toContain("提到茶叶时写明采摘时节");
    fireEvent.click(screen.getByTestId("history-why-close"));
    expect(screen.queryByTestId("history-why")).toBeNull();
  });
});
