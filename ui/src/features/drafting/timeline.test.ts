import { beforeEach, describe, expect, it } from "vitest";
import { approvalRequested, assistant, compactBoundary, compactionFailed, compactionStarted, contextWarning, created, delta, ev, resetSeq, toolResult, turnEnded, turnStarted, user } from "../../shared/testing/fixtures";
import { emptyTimeline, fold, foldAll, proposalIdsIn, stepState } from "./timeline";

beforeEach(() => resetSeq());

const call = (id: string, name: string, args: unknown = {}) => ({ id, name, arguments: JSON.stringify(args) });

describe("folding the log into the panel's state", () => {
  it("shows a message's typed selection as its scope, and the text as the task", () => {
    const selection = { from: 3, to: 9, text: "第一段。" };
    const s = foldAll([ev(created()), ev({ kind: "user_message", payload: { text: "把开头改短", wasQueued: false, selection } })]);
    expect(s.items[0]).toMatchObject({ kind: "user", text: "把开头改短", selection });
  });

  it("shows messages and one step per tool call, through its states", () => {
    const events = [
      ev(created()),
      ev(user('把开头改短\n\n<selection from="3" to="9">\n第一段。\n</selection>')),
      ev(turnStarted()),
      ev(assistant("我先读一下。", [call("c1", "read_project_context"), call("c2", "propose_source_patch", { summary: "改短" })])),
      ev({ kind: "tool_decision", payload: { tool: "read_project_context", decision: "allow", reason: "" } }, { toolUseId: "c1" }),
    ];
    let s = foldAll(events);
    expect(s.turnOpen).toBe(true);
    expect(s.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool", "tool"]);
    expect(s.items[0]).toMatchObject({ text: "把开头改短", selection: { from: 3, to: 9, text: "第一段。" } });
    expect(s.items.filter((i) => i.kind === "tool").map((i) => i.kind === "tool" && i.state)).toEqual(["running", "queued"]);
    s = fold(s, ev(toolResult("read_project_context", "{}"), { toolUseId: "c1" }));
    s = fold(s, ev(toolResult("propose_source_patch", JSON.stringify({ proposalId: "prp_9", hunks: 2 })), { toolUseId: "c2" }));
    expect(s.items.filter((i) => i.kind === "tool").map((i) => i.kind === "tool" && [i.state, i.proposalIds])).toEqual([
      ["done", []],
      ["done", ["prp_9"]],
    ]);
    expect(s.proposalIds).toEqual(["prp_9"]);
    s = fold(s, ev(assistant("好了。")));
    s = fold(s, ev(turnEnded("completed")));
    expect(s.turnOpen).toBe(false);
    // A completed turn adds no line of its own.
    expect(s.items.at(-1)).toMatchObject({ kind: "assistant", text: "好了。" });
    expect(s.inputTokens).toBe(200);
    expect(s.lastSequence).toBe(9);
  });

  it("a prompt waits for the person until decided; a denial is not a failure", () => {
    let s = foldAll([
      ev(created()),
      ev(user("直接改吧")),
      ev(turnStarted()),
      ev(assistant("", [call("c1", "apply_proposal", { proposalId: "prp_1" })])),
      ev(approvalRequested("req_1", "apply_proposal", { proposalId: "prp_1" }), { toolUseId: "c1" }),
      ev(turnEnded("blocked_on_approval")),
    ]);
    expect(s.pendingApproval).toMatchObject({ requestId: "req_1", tool: "apply_proposal", toolUseId: "c1" });
    expect(s.items.at(-1)).toMatchObject({ kind: "tool", state: "waiting" });
    s = fold(s, ev({ kind: "approval_resolved", payload: { requestId: "req_1", approved: false, decidedBy: "me", note: "先别改" } }, { toolUseId: "c1" }));
    s = fold(s, ev(toolResult("apply_proposal", "denied: 先别改", "denied"), { toolUseId: "c1" }));
    expect(s.pendingApproval).toBeNull();
    expect(s.items.find((i) => i.kind === "decision")).toMatchObject({ approved: false, note: "先别改", noteId: null, tool: "apply_proposal", plan: false });
    expect(s.items.find((i) => i.kind === "tool")).toMatchObject({ state: "denied", status: "denied" });
    // Plan mode's or a rule's refusal is blocked; only a real error fails.
    expect([stepState("blocked"), stepState("permission_denied"), stepState("tool_error"), stepState("success")]).toEqual(["blocked", "blocked", "failed", "done"]);
    // A note the core words (a new message superseded the approval) keeps its id.
    s = fold(s, ev({ kind: "approval_resolved", payload: { requestId: "req_2", approved: false, decidedBy: "me", note: "Superseded by a new message.", noteId: "superseded_by_new_message" } }));
    expect(s.items.at(-1)).toMatchObject({ kind: "decision", noteId: "superseded_by_new_message" });
  });

  it("queued messages wait below the turn and join the history when delivered", () => {
    let s = foldAll([ev(created()), ev(user("一")), ev(turnStarted()), ev({ kind: "message_queued", payload: { text: "二" } })]);
    expect(s.queued).toEqual(["二"]);
    s = fold(s, ev(assistant("好")));
    s = fold(s, ev(user("二", true)));
    expect(s.queued).toEqual([]);
    expect(s.items.at(-1)).toMatchObject({ kind: "user", text: "二", wasQueued: true });
  });

  it("an interrupted turn cancels the steps still running and says so once", () => {
    let s = foldAll([ev(created()), ev(user("改")), ev(turnStarted()), ev(assistant("", [call("c1", "read_versions")]))]);
    s = fold(s, ev(turnEnded("interrupted")));
    expect(s.items.map((i) => [i.kind, i.kind === "tool" ? i.state : ""])).toEqual([
      ["user", ""],
      ["tool", "cancelled"],
      ["end", ""],
    ]);
    // A reply cut short already says it stopped: no second line.
    const t = foldAll([ev(created()), ev(user("写")), ev(turnStarted()), ev(assistant("写到一半", [], true)), ev(turnEnded("interrupted"))]);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "assistant"]);
  });

  it("an error end keeps its hints for the person, and the task to send again", () => {
    const s = foldAll([ev(created()), ev(user("改")), ev(turnStarted()), ev(turnEnded("model_error", [{ id: "retry_connection", message: "Try again." }]))]);
    expect(s.items.at(-1)).toMatchObject({ kind: "end", reason: "model_error", hints: [{ id: "retry_connection" }], cutOff: false, retry: { text: "改", selection: null } });
    // Other ends offer no retry.
    const t = foldAll([ev(created()), ev(user("改")), ev(turnStarted()), ev(turnEnded("max_model_turns"))]);
    expect(t.items.at(-1)).toMatchObject({ kind: "end", retry: null });
  });

  it("pins too long for the window end the turn with what to unpin, and the pin list reads its budget again", () => {
    const before = foldAll([ev(created()), ev(user("继续")), ev(turnStarted())]);
    const s = fold(before, ev(turnEnded("pins_too_long", [{ id: "unpin", message: "Unpin something." }, { id: "larger_context", message: "Or a larger window." }])));
    expect(s.items.at(-1)).toMatchObject({ kind: "end", reason: "pins_too_long", hints: [{ id: "unpin" }, { id: "larger_context" }], retry: null });
    expect(s.longSessionSeq).toBeGreaterThan(before.longSessionSeq);
    const other = fold(before, ev(turnEnded("context_too_long")));
    expect(other.longSessionSeq).toBe(before.longSessionSeq);
  });

  it("an answer a failed call cut off is kept and marked so, unlike one the person stopped", () => {
    const selection = { from: 3, to: 9, text: "第一段。" };
    const cut = assistant("写到一半");
    const s = foldAll([
      ev(created()),
      ev({ kind: "user_message", payload: { text: "把开头改短", wasQueued: false, selection } }),
      ev(turnStarted()),
      ev({ kind: "assistant_message", payload: { ...(cut.payload as object), finishReason: "error", interrupted: true } } as typeof cut),
      ev(turnEnded("model_error", [{ id: "connection_lost", message: "The text that arrived is kept." }])),
    ]);
    expect(s.items.map((i) => i.kind)).toEqual(["user", "assistant", "end"]);
    expect(s.items[1]).toMatchObject({ kind: "assistant", text: "写到一半", interrupted: true, cutOff: true });
    expect(s.items[2]).toMatchObject({ kind: "end", reason: "model_error", cutOff: true, retry: { text: "把开头改短", selection } });
    // Cut off by an error the provider sent (no lost connection): its own end line.
    const provider = foldAll([
      ev(created()),
      ev(user("写")),
      ev(turnStarted()),
      ev({ kind: "assistant_message", payload: { ...(cut.payload as object), finishReason: "error", interrupted: true } } as typeof cut),
      ev(turnEnded("model_error", [{ id: "wait_and_retry", message: "Wait a moment and try again." }])),
    ]);
    expect(provider.items[1]).toMatchObject({ kind: "assistant", cutOff: true });
    expect(provider.items[2]).toMatchObject({ kind: "end", cutOff: false, retry: { text: "写" } });
    const stopped = foldAll([ev(created()), ev(user("写")), ev(turnStarted()), ev(assistant("写到一半", [], true)), ev(turnEnded("interrupted"))]);
    expect(stopped.items[1]).toMatchObject({ kind: "assistant", interrupted: true, cutOff: false });
  });

  it("live-only events and duplicates leave the state alone; mode, context and rewinds are tracked", () => {
    let s = foldAll([ev(created()), ev({ kind: "mode_changed", payload: { mode: "plan", by: "user" } })]);
    expect(s.mode).toBe("plan");
    const same = fold(s, ev(delta("流"), {}, true));
    expect(same).toBe(s);
    s = fold(s, ev({ kind: "context_assembled", payload: { snapshotId: "ctx_1", estimatedTokens: 1200, layers: [{ layer: "pinned", tokens: 800, trimmed: false }] } }));
    expect(s.context?.estimatedTokens).toBe(1200);
    s = fold(s, ev({ kind: "rewound", payload: { checkpointId: "chk_1", toSequence: 1, version: 4 } }));
    expect(s.items.at(-1)).toMatchObject({ kind: "rewound", version: 4 });
  });

  it("finds proposal ids in a tool's result", () => {
    expect(proposalIdsIn(JSON.stringify({ proposalId: "prp_1" }))).toEqual(["prp_1"]);
    expect(proposalIdsIn(JSON.stringify({ proposals: [{ id: "prp_2" }, "prp_3"], proposalIds: ["prp_2"] }))).toEqual(["prp_2", "prp_3"]);
    expect(proposalIdsIn("not json")).toEqual([]);
    expect(proposalIdsIn(JSON.stringify({ proposalId: "ver_1" }))).toEqual([]);
    expect(fold(emptyTimeline, ev(created())).items).toEqual([]);
  });

  it("a compaction runs between its start and its boundary; a warning is a line", () => {
    let s = foldAll([ev(created()), ev(user("改")), ev(turnStarted()), ev(contextWarning(72, 80)), ev(compactionStarted())]);
    expect(s.compacting).toMatchObject({ trigger: "auto", contextWindow: 32768 });
    expect(s.items.at(-1)).toMatchObject({ kind: "contextWarning", percent: 72, compactAt: 80 });
    s = fold(s, ev(compactBoundary()));
    expect(s.compacting).toBeNull();
    expect(s.items.at(-1)).toMatchObject({ kind: "boundary", compacted: 12, summary: { next_step_hint: "给标题三个候选" } });
    expect(fold(s, ev(contextWarning(75))).items.at(-1)).toMatchObject({ kind: "contextWarning", compactAt: null });
  });

  it("a compaction the person stopped, or the app did, is not a failure; a failure counts", () => {
    let s = foldAll([ev(created()), ev(compactionStarted("manual")), ev(compactionFailed(0, "Stopped by the user; nothing was replaced."))]);
    expect(s.compacting).toBeNull();
    expect(s.items.at(-1)).toMatchObject({ kind: "compactionFailed", outcome: "stopped" });
    s = foldAll([ev(compactionStarted()), ev(compactionFailed(1))], s);
    expect(s.items.at(-1)).toMatchObject({ kind: "compactionFailed", outcome: "failed", consecutive: 1 });
    s = foldAll([ev(compactionStarted()), ev(compactionFailed(1, "The app stopped during this compaction; nothing was replaced."))], s);
    expect(s.items.at(-1)).toMatchObject({ kind: "compactionFailed", outcome: "interrupted" });
    // A turn end closes a compaction the log left open.
    expect(foldAll([ev(compactionStarted()), ev(turnEnded("interrupted"))], s).compacting).toBeNull();
  });

  it("the same task sent again right after a failed turn is that turn's retry; an API key problem is named", () => {
    const s = foldAll([
      ev(created()),
      ev(user("写一句")),
      ev(turnStarted()),
      ev(turnEnded("model_error", [{ id: "check_api_key", message: "Check the API key of this profile; set it again if it changed." }])),
      ev(user("写一句")),
    ]);
    expect(s.items.map((i) => i.kind)).toEqual(["user", "end", "user"]);
    expect(s.items[1]).toMatchObject({ kind: "end", keyProblem: "rejected" });
    expect(s.items[0]).toMatchObject({ retry: false });
    expect(s.items[2]).toMatchObject({ retry: true });
    // Another task after a failure is not a retry.
    const other = foldAll([ev(created()), ev(user("一")), ev(turnStarted()), ev(turnEnded("model_error")), ev(user("二"))]);
    expect(other.items.at(-1)).toMatchObject({ retry: false });
    expect(other.items[1]).toMatchObject({ keyProblem: null });
  });

  it("a key that was never set and a key gone from the keychain are told apart", () => {
    const end = (hint: string) =>
      foldAll([ev(created()), ev(user("写一句")), ev(turnStarted()), ev(turnEnded("model_error", [{ id: hint, message: "…" }, { id: "use_env_key", message: "…" }]))]).items[1];
    expect(end("set_api_key")).toMatchObject({ kind: "end", keyProblem: "missing" });
    expect(end("set_api_key_again")).toMatchObject({ kind: "end", keyProblem: "gone" });
  });
});
