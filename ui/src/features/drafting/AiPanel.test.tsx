import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HarnessEvent } from "../../shared/api/client";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { CheckpointReason, LlmProfile } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { AiPanel } from "./AiPanel";
import { approvalRequested, assistant, compactBoundary, compactionFailed, compactionStarted, created, ev, profile, resetSeq, sessionView, turnEnded, turnStarted, user, view } from "../../shared/testing/fixtures";
import { Drafting } from "./store";
import { type PanelSetup, setupPanel } from "./panelHarness";

afterEach(() => {
  cleanup();
  window.localStorage.clear();
});
beforeEach(() => resetSeq());

/** The panel as most tests here need it: a local server detected for the setup offer. */
const setup = (s: PanelSetup = {}) => setupPanel({ localServer: true, ...s });

const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });

describe("the AI panel", () => {
  it("a step's line says what it does in the person's language: its summary, else a platform's name, never the platform's id", async () => {
    const toolResult = (tool: string) => ({ kind: "tool_result" as const, payload: { tool, status: "success" as const, content: "{}", reusedExecution: false } });
    const log = [
      ev(created()),
      ev(user("选话题")),
      ev(turnStarted()),
      ev(assistant("", [call("c1", "propose_tags", { platform: "xiaohongshu", candidates: [{ text: "早起" }] }), call("c2", "propose_tags", { platform: "zhihu", summary: "知乎话题", candidates: [{ text: "写作" }] })])),
      ev(toolResult("propose_tags"), { toolUseId: "c1" }),
      ev(toolResult("propose_tags"), { toolUseId: "c2" }),
      ev(turnEnded("completed")),
    ];
    setup({ log, lang: "zh" });
    await waitFor(() => expect(screen.getAllByTestId("tool-step")).toHaveLength(2));
    const args = screen.getAllByTestId("tool-step").map((s) => s.querySelector(".step-arg")?.textContent);
    expect(args).toEqual(["小红书", "知乎话题"]);
  });

  it("with no model, offers to set one up and the local server it found", async () => {
    const { onSetUp } = setup({ profiles: [] });
    const offer = await screen.findByTestId("ai-setup");
    await within(offer).findByText(/Ollama answers at http:\/\/127\.0\.0\.1:11434\/v1/);
    expect(screen.queryByTestId("error-banner")).toBeNull();
    fireEvent.click(screen.getByTestId("ai-setup-open"));
    expect(onSetUp).toHaveBeenCalledOnce();
  });

  it("a profile added in Settings while the offer shows opens the panel, without Check again", async () => {
    const profiles: LlmProfile[] = [];
    const { transport, client } = setup({ profiles });
    await screen.findByTestId("ai-setup");
    transport.on("llmProfile.create", () => {
      const made = profile();
      profiles.push(made);
      return { profile: made, warnings: [] };
    });
    await client.call("llmProfile.create", { name: "local", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen", keyRequired: false });
    await waitFor(() => expect(screen.queryByTestId("ai-setup")).toBeNull());
    expect(screen.getByTestId("ai-panel").textContent).not.toContain("Set up a model");
  });

  it("says the same in Chinese", async () => {
    setup({ profiles: [], lang: "zh" });
    expect((await screen.findByTestId("ai-setup")).textContent).toContain("先设置一个模型");
  });

  it("a backend that cannot be reached shows the code's text and hint, with retry", async () => {
    const transport = new FakeTransport();
    transport.on("app.info", () => {
      throw apiError("OFFLINE", "Could not reach the Inkstone backend.", [{ id: "offline.check_running", message: "x" }]);
    });
    const ctx = makeCtx(transport, "zh");
    render(
      <WithCtx ctx={ctx}>
        <AiPanel drafting={new Drafting(ctx.client, "prj_1")} selectionText="" getSelection={() => null} onReview={() => undefined} onSetUpModel={() => undefined} workingCopy={{ flush: async () => undefined, revision: () => 0, replace: () => undefined }} />
      </WithCtx>,
    );
    const banner = await screen.findByTestId("error-banner");
    expect(banner.textContent).toContain("无法连接 Inkstone 后端");
    expect(banner.textContent).not.toContain("Could not reach");
  });

  it("a plan waits for approval; approve, or send it back with a comment", async () => {
    const log = [
      ev(created()),
      ev(user("改结尾")),
      ev(turnStarted()),
      ev(assistant("", [call("c1", "exit_plan_mode", { plan: "1. 收紧\n2. 加号召" })])),
      ev(approvalRequested("req_1", "exit_plan_mode", { plan: "1. 收紧\n2. 加号召" }), { toolUseId: "c1" }),
      ev(turnEnded("blocked_on_approval")),
    ];
    const { transport } = setup({ log, status: "waitingForApproval" });
    const card = await screen.findByTestId("plan-card");
    expect(card.querySelectorAll("li")).toHaveLength(2);
    expect(screen.getByTestId("tool-step").dataset.state).toBe("waiting");
    fireEvent.click(screen.getByTestId("plan-return"));
    fireEvent.change(screen.getByTestId("plan-comment"), { target: { value: "不要加号召" } });
    fireEvent.click(screen.getByTestId("plan-return-confirm"));
    await waitFor(() => expect(transport.callsTo("session.resolveApproval")).toEqual([{ sessionId: "ses_1", requestId: "req_1", approved: false, note: "不要加号召", timeline: true }]));
  });

  it("a permission prompt for apply_proposal shows exactly what changes and where; allow once saves typing first", async () => {
    const change = {
      proposalId: "prp_1",
      kind: "source_patch",
      summary: "结尾加号召",
      target: { type: "source" },
      omittedHunks: 0,
      hunks: [
        {
          id: "h1",
          contentHash: "sha256:h1",
          display: {
            oldStart: 9,
            oldLen: 1,
            newStart: 9,
            newLen: 1,
            lines: [
              { kind: "delete", oldLine: 9, newLine: null, segments: [{ text: "结尾。", emphasized: false }] },
              { kind: "insert", oldLine: null, newLine: 9, segments: [{ text: "结尾。", emphasized: false }, { text: "今天就写吧。", emphasized: true }] },
            ],
          },
        },
      ],
    };
    const requested = approvalRequested("req_2", "apply_proposal", { proposalId: "prp_1" });
    const log = [
      ev(created()),
      ev(user("你来应用")),
      ev(turnStarted()),
      ev(assistant("", [call("c1", "apply_proposal", { proposalId: "prp_1" })])),
      // The approval is bound to revision 7 of the working copy; accepting saves version 5.
      ev({ ...requested, payload: { ...(requested.payload as object), targetVersion: 7, change: { ...change, createsVersion: 5 } } } as Pick<HarnessEvent, "kind" | "payload">, {
        toolUseId: "c1",
      }),
      ev(turnEnded("blocked_on_approval")),
    ];
    const { transport, flush } = setup({ log, status: "waitingForApproval" });
    const prompt = await screen.findByTestId("approval");
    expect(prompt.textContent).toContain("Write “结尾加号召” into the source: 1 change, exactly this:");
    expect(within(prompt).getByTestId("approval-creates-version").textContent).toBe("Allowing it saves version 5.");
    expect(prompt.textContent).not.toContain("version 7");
    expect(within(prompt).getByTestId("approval-diff").querySelector(".diff-em")?.textContent).toBe("今天就写吧。");
    fireEvent.click(screen.getByTestId("allow-once"));
    await waitFor(() => expect(transport.callsTo("session.resolveApproval")).toEqual([{ sessionId: "ses_1", requestId: "req_2", approved: true, timeline: true }]));
    expect(flush).toHaveBeenCalled();
  });

  it("a question is answered by one of its options", async () => {
    const log = [
      ev(created()),
      ev(user("改")),
      ev(turnStarted()),
      ev(assistant("", [call("c1", "ask_user_question", { question: "哪种语气？", options: ["温和", "直接"] })])),
      ev({ kind: "question_asked", payload: { questionId: "q_1", question: "哪种语气？", options: ["温和", "直接"] } }, { toolUseId: "c1" }),
      ev(turnEnded("blocked_on_question")),
    ];
    const { transport } = setup({ log, status: "waitingForAnswer" });
    await screen.findByTestId("question");
    fireEvent.click(screen.getAllByTestId("question-option")[1]);
    await waitFor(() => expect(transport.callsTo("session.answerQuestion")).toEqual([{ sessionId: "ses_1", questionId: "q_1", answer: "直接", timeline: true }]));
  });

  it("Enter sends outside an IME composition, Shift+Enter does not; the selection goes with the task, typed, after a save", async () => {
    const log = [ev(created())];
    const selection = { from: 4, to: 8, text: "第二段。" };
    const { transport, flush } = setup({ log, selection });
    const input = await screen.findByTestId("composer-input");
    expect(screen.getByTestId("scope-chip").textContent).toContain("第二段。");
    fireEvent.change(input, { target: { value: "改短" } });
    fireEvent.keyDown(input, { key: "Enter", keyCode: 229 });
    fireEvent.keyDown(input, { key: "Enter", isComposing: true });
    fireEvent.keyDown(input, { key: "Enter", shiftKey: true });
    expect(transport.callsTo("session.submit")).toHaveLength(0);
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(transport.callsTo("session.submit")).toHaveLength(1));
    expect(transport.callsTo("session.submit")[0]).toEqual({ sessionId: "ses_1", text: "改短", selection, timeline: true });
    // The engine checks the range against the saved source: the editor saved first.
    expect(flush).toHaveBeenCalledTimes(1);
  });

  it("a selection the engine refuses shows the code's text and the hint in the person's language", async () => {
    const { transport } = setup({ log: [ev(created())], selection: { from: 4, to: 8, text: "第二段。" }, lang: "zh" });
    transport.on("session.submit", () => {
      throw apiError("VALIDATION", "The selected text is not what the source holds at 4–8.", [{ id: "reselect_text", message: "Select the text again." }]);
    });
    const input = await screen.findByTestId("composer-input");
    fireEvent.change(input, { target: { value: "改短" } });
    fireEvent.keyDown(input, { key: "Enter" });
    const banner = await screen.findByTestId("error-banner");
    expect(banner.dataset.code).toBe("VALIDATION");
    expect(banner.textContent).toContain("部分输入无效。");
    expect(banner.textContent).toContain("请在编辑器中重新选中文字，再发送任务。");
  });

  it("a removed chip sends the task alone; Ctrl+Enter sends too", async () => {
    const { transport } = setup({ log: [ev(created())], selection: { from: 4, to: 8, text: "第二段。" } });
    const input = await screen.findByTestId("composer-input");
    fireEvent.click(screen.getByTestId("scope-remove"));
    expect(screen.queryByTestId("scope-chip")).toBeNull();
    fireEvent.change(input, { target: { value: "全文更口语" } });
    fireEvent.keyDown(input, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(transport.callsTo("session.submit")).toEqual([{ sessionId: "ses_1", text: "全文更口语", timeline: true }]));
  });

  it("a running turn shows its elapsed seconds, counting while it runs", async () => {
    let clock = 1_000_000;
    const log = [ev(created()), ev(user("改")), ev(turnStarted())];
    setup({ log, status: "running", lang: "zh", now: () => clock });
    await screen.findByTestId("working");
    expect(screen.getByTestId("turn-elapsed").textContent?.trim()).toBe("0 秒");
    clock += 83_000;
    await waitFor(() => expect(screen.getByTestId("turn-elapsed").textContent?.trim()).toBe("83 秒"), { timeout: 2500 });
  });

  it("while a turn runs, Stop is shown and interrupts it; an error end shows its hint in the person's language", async () => {
    const log = [ev(created()), ev(user("改")), ev(turnStarted())];
    const { transport } = setup({ log, status: "running", lang: "zh" });
    const stop = await screen.findByTestId("stop");
    expect(screen.getByTestId("working")).toBeTruthy();
    fireEvent.click(stop);
    await waitFor(() => expect(transport.callsTo("session.interrupt")).toEqual([{ sessionId: "ses_1" }]));
    cleanup();
    resetSeq();
    setup({ log: [ev(created()), ev(user("改")), ev(turnStarted()), ev(turnEnded("model_error", [{ id: "retry_connection", message: "If it worked before, try again." }]))], lang: "zh" });
    const end = await screen.findByTestId("turn-end");
    expect(end.textContent).toContain("模型未能回答。");
    expect(end.textContent).toContain("如果之前能正常使用，请再试一次；连接可能被中断了。");
    expect(screen.queryByTestId("stop")).toBeNull();
    cleanup();
    resetSeq();
    const tooLong = [
      { id: "larger_context", message: "Or choose a model with a larger context window." },
      { id: "tools_on_demand", message: "Or let this model load tools on demand (Settings → AI models)." },
    ];
    setup({ log: [ev(created()), ev(user("改")), ev(turnStarted()), ev(turnEnded("context_too_long", tooLong))], lang: "zh" });
    const full = await screen.findByTestId("turn-end");
    expect(full.textContent).toContain("换一个上下文窗口更大的模型");
    expect(full.textContent).toContain("按需加载工具（设置 → AI 模型）");
  });

  it("an answer the lost connection cut off keeps its text, says so, and Retry sends the task again as it was", async () => {
    const selection = { from: 4, to: 8, text: "第二段。" };
    const cut = assistant("春眠不觉晓，处处");
    const hints = [
      { id: "connection_lost", message: "The text that arrived is kept; try again for the whole answer." },
      { id: "check_server_running", message: "For a local server, check that it is running." },
    ];
    const log = [
      ev(created()),
      ev({ kind: "user_message", payload: { text: "写一句", wasQueued: false, selection } }),
      ev(turnStarted()),
      ev({ kind: "assistant_message", payload: { ...(cut.payload as object), finishReason: "error", interrupted: true, inputTokens: 0, outputTokens: 0 } } as Pick<HarnessEvent, "kind" | "payload">),
      ev(turnEnded("model_error", hints)),
    ];
    const { transport } = setup({ log });
    const end = await screen.findByTestId("turn-end");
    const answer = screen.getByTestId("msg-assistant");
    expect(answer.textContent).toContain("春眠不觉晓，处处");
    expect(within(answer).getByTestId("msg-cut-off").textContent).toBe("Cut off before the end.");
    expect(end.textContent).toContain("The connection to the model was lost before the answer was finished.");
    expect(end.textContent).not.toContain("The model could not answer.");
    expect(end.textContent).toContain("The text that arrived is kept; try again for the whole answer.");
    fireEvent.click(within(end).getByTestId("turn-retry"));
    await waitFor(() => expect(transport.callsTo("session.submit")).toEqual([{ sessionId: "ses_1", text: "写一句", selection, timeline: true }]));
    cleanup();
    resetSeq();
    setup({ log: log.map((e) => ({ ...e })), lang: "zh" });
    const zhEnd = await screen.findByTestId("turn-end");
    expect(zhEnd.textContent).toContain("回答完成前，与模型的连接断开了。");
    expect(zhEnd.textContent).toContain("已收到的文字已保留；再试一次可得到完整回答。");
    expect(screen.getByTestId("msg-cut-off").textContent).toBe("在完成前被中断。");
    expect(within(zhEnd).getByTestId("turn-retry").textContent).toBe("重试");
  });

  it("a stop by the person offers no Retry; a later turn takes it from an older failure", async () => {
    setup({ log: [ev(created()), ev(user("写")), ev(turnStarted()), ev(assistant("写到一半", [], true)), ev(turnEnded("interrupted"))] });
    expect((await screen.findByTestId("msg-stopped")).textContent).toBe("Stopped before the end.");
    expect(screen.queryByTestId("turn-retry")).toBeNull();
    cleanup();
    resetSeq();
    setup({ log: [ev(created()), ev(user("一")), ev(turnStarted()), ev(turnEnded("model_error")), ev(user("二")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))] });
    await screen.findByTestId("turn-end");
    await screen.findByText("好");
    expect(screen.queryByTestId("turn-retry")).toBeNull();
  });

  it("counts open proposals in words: one, or many; tokens in Chinese as 词元", async () => {
    setup({ log: [ev(created())], proposals: [view()] });
    expect((await screen.findByTestId("open-proposals")).textContent).toContain("1 proposal to review");
    cleanup();
    resetSeq();
    setup({ log: [ev(created())], proposals: [view(), view({ id: "prp_2" })] });
    expect((await screen.findByTestId("open-proposals")).textContent).toContain("2 proposals to review");
    cleanup();
    resetSeq();
    setup({ log: [ev(created()), ev(user("改")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))], lang: "zh" });
    await screen.findByText("好");
    const panel = screen.getByTestId("ai-panel");
    expect(panel.textContent).toContain("120 / 10万 词元");
    expect(panel.textContent).not.toMatch(/\btokens\b/);
  });

  it("shows constraints and checkpoints when the backend has them; a constraint can be removed", async () => {
    const { transport } = setup({ log: [ev(created())], methods: ["constraint.list", "checkpoint.list"] });
    transport.on("constraint.list", () => ({
      constraints: [{ id: "cns_1", ownerId: "ses_1", projectId: "prj_1", text: "不要用“最佳”", proposalId: "prp_1", hunks: ["h2"], createdBy: "me", createdAt: "2026-11-22T11:00:00Z" }],
    }));
    transport.on("checkpoint.list", () => ({ checkpoints: [] }));
    transport.on("constraint.remove", ({ constraintId }) => ({ id: constraintId, deleted: true }));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    const toggle = await screen.findByTestId("constraints-toggle");
    fireEvent.click(toggle);
    expect((await screen.findByTestId("constraint")).textContent).toContain("不要用“最佳”");
    fireEvent.click(screen.getByTestId("constraint-remove"));
    await waitFor(() => expect(screen.queryByTestId("constraint")).toBeNull());
    expect(transport.callsTo("constraint.remove")).toEqual([{ sessionId: "ses_1", constraintId: "cns_1" }]);
    expect(screen.getByTestId("checkpoints-toggle").textContent).toBe("Checkpoints (0)");
  });

  it("scrolled up in the timeline, sending a task scrolls to the end, where the answer streams", async () => {
    const { transport } = setup({ log: [ev(created()), ev(user("一")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))] });
    await screen.findByText("好");
    const feed = screen.getByTestId("timeline");
    let top = 0;
    Object.defineProperty(feed, "scrollHeight", { configurable: true, get: () => 1000 });
    Object.defineProperty(feed, "clientHeight", { configurable: true, get: () => 300 });
    Object.defineProperty(feed, "scrollTop", { configurable: true, get: () => top, set: (v: number) => void (top = Math.min(v, 700)) });
    top = 400;
    fireEvent.scroll(feed);
    expect(screen.getByTestId("feed-jump").textContent).toBe("Jump to latest ↓");
    transport.on("session.submit", () => new Promise(() => undefined));
    const input = screen.getByTestId("composer-input");
    fireEvent.change(input, { target: { value: "再改" } });
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(top).toBe(700));
    expect(screen.queryByTestId("feed-jump")).toBeNull();
  });

  it("a running compaction shows as a state of the timeline with Stop; a stopped one says so, not 'failed 0 times'", async () => {
    const log = [ev(created()), ev(user("改")), ev(turnStarted()), ev(compactionStarted())];
    const { transport } = setup({ log, status: "running", lang: "zh" });
    const state = await screen.findByTestId("compacting");
    expect(state.textContent).toContain("正在总结较早的对话…");
    expect(screen.queryByTestId("working")).toBeNull();
    fireEvent.click(within(state).getByTestId("compacting-stop"));
    await waitFor(() => expect(transport.callsTo("session.interrupt")).toEqual([{ sessionId: "ses_1" }]));
    cleanup();
    resetSeq();
    setup({ log: [ev(created()), ev(compactionStarted("manual")), ev(compactionFailed(0, "Stopped by the user; nothing was replaced."))], lang: "zh" });
    const line = await screen.findByTestId("compaction-failed");
    expect(line.textContent).toBe("已停止总结对话，未替换任何内容。");
    expect(screen.queryByTestId("compacting")).toBeNull();
  });

  it("Compact now compacts the session, showing it run; with nothing older it says so", async () => {
    const log = [ev(created()), ev(user("一")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))];
    const toast = vi.fn();
    const { transport } = setup({ log, methods: ["session.compact"], toast });
    let finish: () => void = () => undefined;
    transport.on("session.compact", (_p, emit) => {
      emit(ev(compactionStarted("manual")));
      return new Promise((resolve) => {
        finish = () => {
          emit(ev(compactBoundary()));
          resolve({ compacted: true, mode: "summarized", tokensBefore: 26000, tokensAfter: 3000, consecutiveFailures: 0, session: sessionView(), timings: { totalMs: 0, modelMs: 0, toolMs: 0, firstTokenMs: null } as never });
        };
      });
    });
    const button = await screen.findByTestId("compact-now");
    expect(button.textContent).toBe("Compact now");
    fireEvent.click(button);
    expect((await screen.findByTestId("compacting")).textContent).toContain("Summarising the earlier conversation…");
    expect(screen.getByTestId("stop")).toBeTruthy();
    expect((screen.getByTestId("compact-now") as HTMLButtonElement).disabled).toBe(true);
    act(() => finish());
    await screen.findByTestId("compact-boundary");
    expect(screen.queryByTestId("compacting")).toBeNull();
    expect(transport.callsTo("session.compact")).toEqual([{ sessionId: "ses_1", timeline: true }]);
    // Nothing older than the latest turn: no events, and a word why.
    transport.on("session.compact", () => ({ compacted: false, consecutiveFailures: 0, session: sessionView(), timings: {} as never }));
    await waitFor(() => expect((screen.getByTestId("compact-now") as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByTestId("compact-now"));
    await waitFor(() => expect(toast).toHaveBeenCalledWith("Nothing to compact yet: only the latest turn is in the conversation."));
  });

  it("the meter's detail sets when the session compacts by itself", async () => {
    const { transport } = setup({ log: [ev(created())], methods: ["session.compact", "session.context", "session.setCompaction"], lang: "zh" });
    const ctxView = (sessionThreshold?: { mode: "auto"; percent: number } | { mode: "manual" }) => ({
      contextWindow: 32768,
      estimatedTokens: 9000,
      percent: 54.9,
      inputBudgetTokens: 16384,
      replyReserveTokens: 16384,
      fixedTokens: 3100,
      systemPromptTokens: 1700,
      toolTokens: 1400,
      fixedFits: true,
      warnPercent: 70,
      threshold: sessionThreshold ?? { mode: "auto" as const, percent: 80 },
      ...(sessionThreshold ? { sessionThreshold } : {}),
      profileThreshold: { mode: "auto" as const, percent: 80 },
      calibrationRatio: 1,
      calibrationSamples: 0,
      compactions: 0,
      consecutiveFailures: 0,
      inCooldown: false,
      summaryTokens: 0,
      pinnedTokens: 200,
    });
    transport.on("session.context", () => ctxView());
    transport.on("session.setCompaction", ({ threshold }) => ctxView(threshold));
    // The meter shows the engine's share (the one its threshold compares) and the reply's reserve beside the request.
    const meter = await screen.findByTestId("context-meter");
    await waitFor(() => expect(meter.getAttribute("aria-label")).toBe("上下文窗口已用 55%"));
    expect(meter.textContent).toContain("9,000 + 回复 1.6万 / 3.3万");
    expect(meter.getAttribute("title")).toContain("每次请求固定占用 3,100：指令 1,700 + 工具定义 1,400。");
    expect(screen.getByTestId("meter-reserve")).toBeTruthy();
    fireEvent.click(meter);
    const select = (await screen.findByTestId("compaction-threshold")) as HTMLSelectElement;
    expect(select.value).toBe("default");
    expect(select.options[0].textContent).toBe("按模型设置（用到 80% 时）");
    fireEvent.change(select, { target: { value: "60" } });
    await waitFor(() => expect(transport.callsTo("session.setCompaction")).toEqual([{ sessionId: "ses_1", threshold: { mode: "auto", percent: 60 } }]));
    await waitFor(() => expect((screen.getByTestId("compaction-threshold") as HTMLSelectElement).value).toBe("60"));
    fireEvent.change(select, { target: { value: "default" } });
    await waitFor(() => expect(transport.callsTo("session.setCompaction").at(-1)).toEqual({ sessionId: "ses_1" }));
  });

  it("says when the fixed part alone (instructions, tools, reply reserve) does not fit the window", async () => {
    const { transport } = setup({ log: [ev(created())], methods: ["session.context"] });
    transport.on("session.context", () => ({
      contextWindow: 2048, estimatedTokens: 1900, percent: 92, inputBudgetTokens: 1024, replyReserveTokens: 1024, fixedTokens: 1900,
      systemPromptTokens: 500, toolTokens: 1400, fixedFits: false, warnPercent: 70, threshold: { mode: "auto" as const, percent: 80 },
      calibrationRatio: 1, calibrationSamples: 0, compactions: 0, consecutiveFailures: 0, inCooldown: false, summaryTokens: 0, pinnedTokens: 0,
    }));
    expect((await screen.findByTestId("context-fixed-too-large")).textContent).toContain("load tools on demand");
  });

  it("a turn too long for the model offers Compact now in its end line", async () => {
    const hints = [{ id: "compact", message: "Or pin what matters and compact the session." }];
    const { transport } = setup({ log: [ev(created()), ev(user("改")), ev(turnStarted()), ev(turnEnded("context_too_long", hints))], methods: ["session.compact"] });
    transport.on("session.compact", () => ({ compacted: false, consecutiveFailures: 0, session: sessionView(), timings: {} as never }));
    const end = await screen.findByTestId("turn-end");
    fireEvent.click(within(end).getByTestId("turn-compact"));
    await waitFor(() => expect(transport.callsTo("session.compact")).toHaveLength(1));
  });

  it("a rejected API key says so and opens the model settings; Retry's message is marked, not a second bubble", async () => {
    const hints = [{ id: "check_api_key", message: "Check the API key of this profile; set it again if it changed." }];
    const log = [ev(created()), ev(user("写一句")), ev(turnStarted()), ev(turnEnded("model_error", hints)), ev(user("写一句")), ev(turnStarted()), ev(turnEnded("model_error", hints))];
    const { onSetUp } = setup({ log, lang: "zh" });
    const ends = await screen.findAllByTestId("turn-end");
    expect(ends[1].textContent).toContain("模型服务拒绝了这个模型的 API 密钥。");
    expect(ends[1].textContent).toContain("请检查此配置的 API 密钥");
    fireEvent.click(within(ends[1]).getByTestId("turn-open-models"));
    expect(onSetUp).toHaveBeenCalledOnce();
    expect(screen.getAllByTestId("msg-user")).toHaveLength(1);
    expect(screen.getByTestId("msg-retry").textContent).toBe("↻ 已重新发送同一任务");
  });

  it("names the harness's own checkpoints by their reason in Chinese, and keeps a person's label", async () => {
    const { transport } = setup({ log: [ev(created())], methods: ["constraint.list", "checkpoint.list"], lang: "zh" });
    const checkpoint = (id: string, label: string, reason: CheckpointReason) => ({ id, ownerId: "ses_1", projectId: "prj_1", label, reason, head: 2, revision: 3, drafts: [], sequence: 1, createdAt: "2026-11-22T11:00:00Z" });
    transport.on("constraint.list", () => ({ constraints: [] }));
    transport.on("checkpoint.list", () => ({ checkpoints: [checkpoint("ckp_1", "Before a turn that made 3 proposals", "before_turn"), checkpoint("ckp_2", "改标题之前", "manual")] }));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    fireEvent.click(await screen.findByTestId("checkpoints-toggle"));
    const items = await screen.findAllByTestId("checkpoint");
    const texts = items.map((li) => li.textContent ?? "");
    const turn = texts.find((x) => x.includes("某轮开始前")) ?? "";
    expect(turn).not.toContain("Before a turn");
    expect(turn.startsWith("某轮开始前")).toBe(true);
    expect(texts.some((x) => x.startsWith("改标题之前 · 你保存的"))).toBe(true);
  });
});
