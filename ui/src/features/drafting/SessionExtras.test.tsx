import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Checkpoint, CheckpointReason, DiffLine, TextDiffResult, VersionSummary } from "../../shared/api/generated";
import { assistant, created, ev, resetSeq, turnEnded, turnStarted, user, view } from "../../shared/testing/fixtures";
import { setupPanel, testProject } from "./panelHarness";
import { lineDiff, reverseDiff } from "./checkpoint";

afterEach(() => {
  cleanup();
  window.localStorage.clear();
});
beforeEach(() => resetSeq());

const checkpoint = (id: string, reason: CheckpointReason, sequence: number, over: Partial<Checkpoint> = {}): Checkpoint => ({
  id,
  ownerId: "ses_1",
  projectId: "prj_1",
  label: reason === "before_turn" ? "Before a turn that made 2 proposals" : "After a turn that made 2 proposals",
  reason,
  head: 2,
  revision: 3,
  drafts: [],
  sequence,
  createdAt: "2026-11-22T11:54:00Z",
  ...over,
});

const line = (kind: DiffLine["kind"], text: string, oldLine: number | null, newLine: number | null): DiffLine => ({ kind, oldLine, newLine, segments: [{ text, emphasized: false }] });

const version = (number: number, origin: VersionSummary["origin"], message: string | null = null): VersionSummary => ({
  id: `ver_${number}`,
  number,
  title: "早起写作",
  author: "me",
  message,
  origin,
  contentHash: "sha256:x",
  createdAt: "2026-11-22T11:58:00Z",
  nChars: 20,
});

// Two turns; the second ("结尾加行动号召") made two proposals, so the harness kept a
// checkpoint before and after it. Both are at version 2, six minutes ago.
function twoTurns() {
  const log = [ev(created()), ev(turnStarted()), ev(user("先读一遍")), ev(assistant("好")), ev(turnEnded("completed"))];
  const before = log.length + 1; // the second turn's turn_started
  log.push(ev(turnStarted()), ev(user("结尾加行动号召，再把第二段收紧")), ev(assistant("改好了")));
  const after = log.length;
  log.push(ev(turnEnded("completed")));
  return { log, checkpoints: [checkpoint("chk_1", "before_turn", before), checkpoint("chk_2", "after_turn", after)] };
}

describe("checkpoints", () => {
  it("are told apart by their turn's number and first words", async () => {
    const { log, checkpoints } = twoTurns();
    const { transport } = setupPanel({ log, methods: ["checkpoint.list"], lang: "zh" });
    transport.on("checkpoint.list", () => ({ checkpoints }));
    fireEvent.click(await screen.findByTestId("checkpoints-toggle"));
    const names = (await screen.findAllByTestId("checkpoint-name")).map((n) => n.textContent);
    expect(names).toEqual(["第 2 轮“结尾加行动号召，再把第二段收紧”结束后", "第 2 轮“结尾加行动号召，再把第二段收紧”开始前"]);
    expect(screen.getAllByTestId("checkpoint")[0].textContent).toContain("第 2 版");
  });

  it("a restore shows, before it is confirmed, the diff from now to the checkpoint, what it takes back and the version it saves; after it, a neutral note names it", async () => {
    const { log, checkpoints } = twoTurns();
    const accepted = view({ id: "prp_cta", summary: "结尾加行动号召", status: "accepted" });
    const { transport, flush, replace } = setupPanel({ log, methods: ["checkpoint.list"], lang: "zh", proposals: [accepted], project: { head: 4 } });
    transport.on("checkpoint.list", () => ({ checkpoints }));
    transport.on("version.list", () => ({
      versions: [version(4, { type: "manual" }, "手改第二段"), version(3, { type: "aiProposal", proposalId: "prp_cta", model: "m", profileId: "llm_1" }), version(2, { type: "manual" }), version(1, { type: "manual" })],
    }));
    // Version 2 → the working copy now: the call to action was added; the working copy
    // holds unsaved typing too (differs from version 4).
    const fromTwo: TextDiffResult = {
      hunks: [{ oldStart: 5, oldLen: 1, newStart: 5, newLen: 1, lines: [line("delete", "第三段。", 5, null), { kind: "insert", oldLine: null, newLine: 5, segments: [{ text: "第三段。", emphasized: false }, { text: "现在就开始写吧！", emphasized: true }] }] }],
      nInsertions: 1,
      nDeletions: 1,
      identical: false,
    };
    transport.on("version.diff", ({ from }) => ({ from, to: null, titleChanged: false, oldTitle: "早起写作", newTitle: "早起写作", diff: from === 2 ? fromTwo : { hunks: [], nInsertions: 1, nDeletions: 0, identical: false } }));
    transport.on("checkpoint.restore", () => ({
      event: { ...ev({ kind: "rewound", payload: { checkpointId: "chk_1", toSequence: 6, version: 6 } } as never) },
      checkpointId: "chk_1",
      project: testProject({ head: 6 }),
      version: version(6, { type: "checkpoint", checkpointId: "chk_1" }),
      draftsRestored: [],
    } as never));
    fireEvent.click(await screen.findByTestId("checkpoints-toggle"));
    const item = (await screen.findAllByTestId("checkpoint"))[1];
    fireEvent.click(within(item).getByTestId("checkpoint-restore"));
    const preview = await within(item).findByTestId("restore-preview");
    expect(flush).toHaveBeenCalled();
    expect(preview.textContent).toContain("恢复到“第 2 轮“结尾加行动号召，再把第二段收紧”开始前”会把正文从现在的样子改成这样");
    // Now → the checkpoint: the call to action goes away.
    const diff = within(preview).getByTestId("restore-diff");
    expect(diff.querySelector(".diff-em")?.textContent).toBe("现在就开始写吧！");
    const undoes = within(preview).getByTestId("restore-undoes").textContent;
    expect(undoes).toContain("第 3 版：AI 建议“结尾加行动号召”");
    expect(undoes).toContain("第 4 版：你保存的版本 · 手改第二段");
    expect(undoes).toContain("你未保存的修改（会先保存为第 5 版）");
    expect(within(preview).getByTestId("restore-saves").textContent).toBe("恢复后保存为第 6 版；之前的每个版本都仍在历史中。");
    await act(async () => {
      fireEvent.click(within(item).getByTestId("checkpoint-restore-confirm"));
    });
    const note = await screen.findByTestId("checkpoint-restored");
    expect(note.textContent).toBe("已恢复“第 2 轮“结尾加行动号召，再把第二段收紧”开始前”，保存为第 6 版");
    expect(note.className).not.toMatch(/warn|danger|error/);
    await waitFor(() => expect(replace).toHaveBeenCalledWith(expect.objectContaining({ head: 6 }), note.textContent));
  });

  it("a harness checkpoint whose turn is not in the log is named by the core's wording id, in Chinese, never its English label", async () => {
    // Only the session's start is in the log: the turn each checkpoint was kept around is not.
    const log = [ev(created())];
    const worded = (id: string, reason: CheckpointReason, labelId: string) =>
      checkpoint(id, reason, 40, { label: reason === "before_turn" ? "Before a turn that made 3 proposals" : "After a turn that made 3 proposals", labelId, labelParams: { proposals: "3" } });
    const { transport } = setupPanel({ log, methods: ["checkpoint.list"], lang: "zh" });
    transport.on("checkpoint.list", () => ({ checkpoints: [worded("chk_1", "before_turn", "turn_before"), worded("chk_2", "after_turn", "turn_after"), checkpoint("chk_old", "after_turn", 41)] }));
    fireEvent.click(await screen.findByTestId("checkpoints-toggle"));
    const names = (await screen.findAllByTestId("checkpoint-name")).map((n) => n.textContent ?? "");
    // Newest first; one stored before wording ids existed falls back to its reason.
    expect(names).toEqual(["某轮结束后", "产生 3 条建议的一轮结束后", "产生 3 条建议的一轮开始前"]);
    const list = screen.getByTestId("checkpoints").textContent ?? "";
    expect(list).not.toMatch(/turn|proposals|Before|After/);
  });

  it("the chips are in the header before their lists load (disabled, no count), so the header does not grow", async () => {
    const { log, checkpoints } = twoTurns();
    const { transport } = setupPanel({ log, methods: ["checkpoint.list", "constraint.list"], lang: "zh" });
    let answer: (v: { checkpoints: Checkpoint[] }) => void = () => undefined;
    transport.on("checkpoint.list", () => new Promise((resolve) => (answer = resolve)));
    transport.on("constraint.list", () => ({ constraints: [] }));
    await screen.findByTestId("composer-input");
    const toggle = screen.getByTestId("checkpoints-toggle") as HTMLButtonElement;
    expect(toggle.disabled).toBe(true);
    expect(toggle.getAttribute("aria-busy")).toBe("true");
    expect(toggle.textContent).toBe("检查点（\u2007）");
    await act(async () => answer({ checkpoints }));
    await waitFor(() => expect(screen.getByTestId("checkpoints-toggle").textContent).toBe("检查点（2）"));
    expect((screen.getByTestId("checkpoints-toggle") as HTMLButtonElement).disabled).toBe(false);
    expect(screen.getByTestId("constraints-toggle").textContent).toBe("约束（0）");
  });

  it("diffs turn round, and a checkpoint's unsaved text is diffed line by line", () => {
    const d = reverseDiff({ hunks: [{ oldStart: 1, oldLen: 1, newStart: 1, newLen: 2, lines: [line("delete", "a", 1, null), line("insert", "b", null, 1), line("insert", "c", null, 2)] }], nInsertions: 2, nDeletions: 1, identical: false });
    expect(d.hunks[0].lines.map((l) => `${l.kind}:${l.segments[0].text}`)).toEqual(["delete:b", "delete:c", "insert:a"]);
    expect([d.nInsertions, d.nDeletions]).toEqual([1, 2]);
    const l = lineDiff("一\n二\n三\n四\n五\n六\n七", "一\n二\n三\n四改\n五\n六\n七");
    expect(l.hunks).toHaveLength(1);
    expect(l.hunks[0].lines.map((x) => x.kind)).toEqual(["equal", "equal", "delete", "insert", "equal", "equal"]);
    expect(lineDiff("同", "同").identical).toBe(true);
  });
});
