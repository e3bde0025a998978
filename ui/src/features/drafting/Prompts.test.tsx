import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { en } from "../../shared/i18n/en";
import { zh } from "../../shared/i18n/zh";
import { approvalRequested, assistant, created, ev, resetSeq, sessionView, turnEnded, turnStarted, user, view } from "../../shared/testing/fixtures";
import { setupPanel, toolCall } from "./panelHarness";
import { describeInput, paragraphOf } from "./ToolInput";
import { translate } from "../../shared/i18n";

afterEach(() => {
  cleanup();
  window.localStorage.clear();
});
beforeEach(() => resetSeq());

/** A turn blocked on an approval of `tool` with `input`; the engine's reason as it logs it. */
function asking(tool: string, input: unknown, reason = `\`${tool}\` needs your approval (the tool's policy).`) {
  const requested = approvalRequested("req_1", tool, input);
  return [
    ev(created()),
    ev(user("改一下")),
    ev(turnStarted()),
    ev(assistant("", [toolCall("c1", tool, input)])),
    ev({ ...requested, payload: { ...(requested.payload as object), reason } } as typeof requested, { toolUseId: "c1" }),
    ev(turnEnded("blocked_on_approval")),
  ];
}

// Every tool the core registers (src-tauri/agent/src/tools/*.rs), by name.
const TOOLS = [
  "read_project_context",
  "read_stored_result",
  "read_tool_result",
  "read_publications",
  "read_comments",
  "read_versions",
  "read_brand_profile",
  "read_templates",
  "read_media_summary",
  "search_project_history",
  "search_workspace",
  "find_relevant_examples",
  "load_tools",
  "ask_user_question",
  "enter_plan_mode",
  "exit_plan_mode",
  "request_permission",
  "propose_memory",
  "propose_source_patch",
  "propose_title_candidates",
  "propose_draft_patch",
  "propose_tags",
  "propose_outline",
  "propose_comment_reply",
  "apply_proposal",
  "update_project_metadata",
  "create_project_comment",
  "resolve_checklist_item",
  "create_checkpoint",
  "compile_platform_drafts",
  "validate_adapted_content",
  "run_brand_check",
  "run_platform_check",
  "run_publish_readiness_check",
];

describe("permission prompts", () => {
  it("every real tool has a label in both languages, and no label names a tool that does not exist", () => {
    for (const messages of [en, zh]) {
      const labelled = Object.keys(messages)
        .filter((k) => k.startsWith("ai.tool."))
        .map((k) => k.slice("ai.tool.".length));
      expect(labelled.filter((name) => !TOOLS.includes(name))).toEqual([]);
      expect(TOOLS.filter((name) => !labelled.includes(name))).toEqual([]);
    }
  });

  it("a comment prompt says, in Chinese, which passage (and paragraph) gets which comment; the raw input only under Details", async () => {
    const input = { body: "这里可以举个例子", quote: "讲习惯" };
    setupPanel({ log: asking("create_project_comment", input), status: "waitingForApproval", lang: "zh" });
    const prompt = await screen.findByTestId("approval");
    expect(prompt.querySelector(".prompt-title")?.textContent).toContain("助手请求：添加评论");
    await waitFor(() => expect(within(prompt).getByTestId("tool-input-what").textContent).toBe("在第 2 段“讲习惯”处添加评论：这里可以举个例子"));
    expect(prompt.textContent).toContain("改动在项目评论中，正文不变。");
    expect(prompt.textContent).toContain("修改项目的操作都会先征得你的同意。");
    // No tool names, no English, and the JSON sits in a closed disclosure.
    expect(prompt.textContent).not.toContain("create_project_comment");
    expect(prompt.textContent).not.toMatch(/needs your approval/);
    const details = within(prompt).getByTestId("tool-input-details") as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector("pre")?.textContent).toContain('"quote": "讲习惯"');
  });

  it("a metadata prompt states each change: the title from what to what, the platforms by name, the reason", async () => {
    const input = { summary: "标题更具体", title: "早起二十分钟", platforms: ["wechat", "xiaohongshu"] };
    setupPanel({ log: asking("update_project_metadata", input), status: "waitingForApproval" });
    const prompt = await screen.findByTestId("approval");
    expect(prompt.querySelector(".prompt-title")?.textContent).toContain("The assistant asks to: Change the project’s settings");
    await waitFor(() => expect(within(prompt).getByTestId("tool-input-what").textContent).toBe("Change the title from “早起写作” to “早起二十分钟”"));
    expect(prompt.textContent).toContain("Set the platforms to WeChat, Xiaohongshu");
    expect(prompt.textContent).toContain("Why: 标题更具体");
    expect(prompt.textContent).not.toContain("update_project_metadata");
  });

  it("a checkpoint and a checklist item are stated in words; a permission request shows what it asks", async () => {
    setupPanel({ log: asking("create_checkpoint", { label: "改结尾之前" }), status: "waitingForApproval", lang: "zh" });
    expect((await screen.findByTestId("tool-input-what")).textContent).toContain("保存名为“改结尾之前”的检查点");
    cleanup();
    resetSeq();
    const { transport } = setupPanel({ log: asking("resolve_checklist_item", { proposalId: "prp_9", itemId: "i2", note: "已加图片说明" }), status: "waitingForApproval" });
    transport.on("proposal.get", () => view({ id: "prp_9", kind: "checklist", summary: "Ready to publish?", payload: { type: "checklist", items: [{ id: "i2", text: "Every image has alt text", blocking: true, resolved: false }] } }));
    await waitFor(() => expect(screen.getByTestId("tool-input-what").textContent).toBe("Mark “Every image has alt text” done in the checklist “Ready to publish?”"));
    expect(screen.getByTestId("approval").textContent).toContain("Note: 已加图片说明");
    cleanup();
    resetSeq();
    setupPanel({ log: asking("request_permission", { permission: "删除第三段", reason: "重复" }), status: "waitingForApproval", lang: "zh" });
    const prompt = await screen.findByTestId("approval");
    expect(within(prompt).getByTestId("tool-input-what").textContent).toBe("请求你同意：删除第三段");
    expect(prompt.textContent).toContain("理由：重复");
    expect(within(prompt).queryByTestId("approval-why")).toBeNull();
  });

  it("offers always allow with the rule and the matches of the scope picked, and answers with that scope", async () => {
    const offer = { tool: "resolve_checklist_item", pattern: { proposalId: "prp_9" } };
    const log = asking("resolve_checklist_item", { proposalId: "prp_9", itemId: "i2" });
    // The engine's offer rides on the request event.
    Object.assign(log[4]!.payload as object, { offer });
    const { transport } = setupPanel({ log, status: "waitingForApproval" });
    transport.on("proposal.get", () => view({ id: "prp_9", kind: "checklist", summary: "Ready?", payload: { type: "checklist", items: [] } }));
    const previews: string[] = [];
    transport.on("allowRule.preview", ({ scope }) => {
      previews.push(scope);
      const n = scope === "workspace" ? 3 : 1;
      const match = { tool: "resolve_checklist_item", at: "2026-01-01T00:00:00Z", projectId: "prj_1", projectTitle: "春晓", ownerId: "ses_1", fields: { proposalId: "prp_9" } };
      return { tool: "resolve_checklist_item", scope, pattern: offer.pattern, projectId: "prj_1", ownerId: "ses_1", matches: Array.from({ length: n }, () => match), total: n };
    });
    let answered: unknown = null;
    transport.on("session.resolveApproval", (params) => {
      answered = params;
      return { queued: false, reason: "completed" as const, session: sessionView() };
    });
    const box = await screen.findByTestId("always-allow");
    expect(within(box).getByTestId("always-rule").textContent).toBe("Rule it would store: always allow “Tick off a checklist item” — This drafting session — for proposalId = prp_9.");
    await waitFor(() => expect(within(box).getByTestId("always-total").textContent).toBe("It would have matched 1 earlier call in this workspace:"));
    expect(within(box).getByTestId("always-match").textContent).toContain("春晓 · proposalId = prp_9");
    fireEvent.click(within(box).getByTestId("always-scope-workspace"));
    await waitFor(() => expect(within(box).getByTestId("always-total").textContent).toBe("It would have matched 3 earlier calls in this workspace:"));
    expect(within(box).getAllByTestId("always-match")).toHaveLength(3);
    expect(previews).toEqual(["session", "workspace"]);
    fireEvent.click(within(box).getByTestId("allow-always"));
    await waitFor(() => expect(answered).toEqual({ sessionId: "ses_1", requestId: "req_1", approved: true, always: "workspace", timeline: true }));
  });

  it("never offers always allow where the engine offers no rule (applying a change, a permission request)", async () => {
    setupPanel({ log: asking("request_permission", { permission: "发布" }), status: "waitingForApproval", lang: "zh" });
    await screen.findByTestId("approval");
    expect(screen.queryByTestId("always-allow")).toBeNull();
    expect(screen.queryByTestId("allow-always")).toBeNull();
  });

  it("why the engine asks is worded from the core's reason id, whatever the English says", async () => {
    const withId = (reasonId: string) => {
      const log = asking("update_project_metadata", { title: "新标题" }, "needs approval (text the UI no longer reads)");
      const i = log.findIndex((e) => e.kind === "approval_requested");
      log[i] = { ...log[i], payload: { ...(log[i].payload as object), reasonId } } as (typeof log)[number];
      return log;
    };
    setupPanel({ log: withId("rule"), status: "waitingForApproval", lang: "zh" });
    expect((await screen.findByTestId("approval-why")).textContent).toBe("工作区规则要求你批准此操作。");
    cleanup();
    resetSeq();
    setupPanel({ log: withId("write"), status: "waitingForApproval", lang: "zh" });
    expect((await screen.findByTestId("approval-why")).textContent).toBe("修改项目的操作都会先征得你的同意。");
  });

  it("in an archived project the approval and the composer give way to the restore, in the person's language", async () => {
    const { transport, onRestoreProject } = setupPanel({ log: asking("create_checkpoint", { label: "改结尾之前" }), status: "waitingForApproval", lang: "zh", project: { archived: true } });
    const notice = await screen.findByTestId("ai-project-archived");
    expect(notice.textContent).toContain(zh["ai.projectArchived.body"]);
    expect(screen.queryByTestId("approval")).toBeNull();
    expect(screen.queryByRole("textbox")).toBeNull();
    fireEvent.click(within(notice).getByTestId("ai-restore-project"));
    expect(onRestoreProject).toHaveBeenCalledTimes(1);
    expect(transport.callsTo("session.resolveApproval")).toEqual([]);
    expect(transport.callsTo("session.submit")).toEqual([]);
    cleanup();
    resetSeq();
    setupPanel({ log: asking("create_checkpoint", { label: "x" }), status: "waitingForApproval", lang: "en" });
    expect(await screen.findByTestId("approval")).toBeTruthy();
    expect(screen.queryByTestId("ai-project-archived")).toBeNull();
    expect(en["ai.projectArchived.restore"]).toBe("Restore project");
  });

  it("a tool without a wording says it runs with the input shown, open", async () => {
    setupPanel({ log: asking("some_plugin_write", { a: 1 }, "`some_plugin_write` needs your approval (the workspace rule for `some_plugin_write`)."), status: "waitingForApproval" });
    const prompt = await screen.findByTestId("approval");
    expect(prompt.textContent).toContain("Runs with the input shown under Details.");
    expect(prompt.textContent).toContain("A workspace rule asks for your approval.");
    expect((within(prompt).getByTestId("tool-input-details") as HTMLDetailsElement).open).toBe(true);
  });

  it("words the common read and check tools for the timeline too", () => {
    const t = (id: Parameters<typeof translate>[1], vars?: Record<string, string | number>) => translate("zh", id, vars);
    expect(describeInput(t, "zh", "search_project_history", { query: "早起" })).toEqual(["搜索“早起”"]);
    expect(describeInput(t, "zh", "run_platform_check", {})).toEqual(["平台：项目的所有平台"]);
    expect(describeInput(t, "zh", "compile_platform_drafts", { platforms: ["x", "wechat"] })).toEqual(["平台：X、微信公众号"]);
    expect(describeInput(t, "zh", "read_project_context", {})).toBeNull();
    expect(paragraphOf("# 标题\n\n第一段。\n\n第二段。", "第二段")).toBe(2);
    expect(paragraphOf("# 标题\n\n第一段。", "标题")).toBeNull();
    expect(paragraphOf("一。一。", "一")).toBeNull();
  });
});

describe("focus after a prompt", () => {
  it("goes back to the composer after Allow, and after a task that opened a question is answered", async () => {
    const log = asking("create_checkpoint", { label: "x" });
    const { transport } = setupPanel({ log, status: "waitingForApproval" });
    const done = { queued: false, reason: "completed" as const, session: sessionView() };
    transport.on("session.resolveApproval", ({ requestId, approved }) => {
      log.push(ev({ kind: "approval_resolved", payload: { requestId, approved, note: "" } }, { toolUseId: "c1" }), ev(turnEnded("completed")));
      return done;
    });
    transport.on("session.answerQuestion", () => {
      log.push(ev({ kind: "question_answered", payload: { questionId: "q_1", answer: "直接" } } as never, { toolUseId: "c2" }), ev(turnEnded("completed")));
      return done;
    });
    transport.on("session.submit", () => {
      log.push(
        ev(user("再改")),
        ev(turnStarted()),
        ev(assistant("", [toolCall("c2", "ask_user_question", { question: "哪种语气？", options: ["温和", "直接"] })])),
        ev({ kind: "question_asked", payload: { questionId: "q_1", question: "哪种语气？", options: ["温和", "直接"] } }, { toolUseId: "c2" }),
        ev(turnEnded("blocked_on_question")),
      );
      return done;
    });
    const allow = await screen.findByTestId("allow-once");
    allow.focus();
    fireEvent.click(allow);
    await waitFor(() => expect(screen.queryByTestId("approval")).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("composer-input")));
    // A task that opens a question, answered by a choice: focus is back in the composer.
    fireEvent.change(screen.getByTestId("composer-input"), { target: { value: "再改" } });
    fireEvent.keyDown(screen.getByTestId("composer-input"), { key: "Enter" });
    const option = (await screen.findAllByTestId("question-option"))[1];
    option.focus();
    fireEvent.click(option);
    await waitFor(() => expect(screen.queryByTestId("question")).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("composer-input")));
  });
});

describe("an apply_proposal prompt shows every change it applies", () => {
  const hunk = (i: number, text: string) => ({
    id: `hk_${i}`,
    contentHash: `sha256:${i}`,
    display: {
      oldStart: i,
      oldLen: 1,
      newStart: i,
      newLen: 1,
      lines: [
        { kind: "delete" as const, oldLine: i, newLine: null, segments: [{ text: `第${i}段。`, emphasized: false }] },
        { kind: "insert" as const, oldLine: null, newLine: i, segments: [{ text, emphasized: true }] },
      ],
    },
  });
  function applying(change: Record<string, unknown>) {
    const requested = approvalRequested("req_1", "apply_proposal", { proposalId: "prp_1" });
    return [
      ev(created()),
      ev(user("应用")),
      ev(turnStarted()),
      ev(assistant("", [toolCall("c1", "apply_proposal", { proposalId: "prp_1" })])),
      ev({ ...requested, payload: { ...(requested.payload as object), change } } as typeof requested, { toolUseId: "c1" }),
      ev(turnEnded("blocked_on_approval")),
    ];
  }
  const hunks = Array.from({ length: 45 }, (_, i) => hunk(i + 1, i === 44 ? "[点这里](https://phish.example/login)" : `第${i + 1}段，改过。`));
  const base = { proposalId: "prp_1", kind: "source_rewrite", summary: "全部改写", target: { type: "source" }, omittedHunks: 0, hunkSetHash: "sha256:set", totalHunks: 45, totalBytes: 3000 };

  it("pages through all of them with the count and size, and allows only once every page was shown", async () => {
    setupPanel({ log: applying({ ...base, hunks }), status: "waitingForApproval" });
    const prompt = await screen.findByTestId("approval");
    expect(prompt.textContent).toContain("45 changes, exactly these:");
    expect(within(prompt).getByTestId("approval-totals").textContent).toBe("45 changes, 3 KB of changed text, all listed below.");
    expect(within(prompt).getByTestId("approval-page").textContent).toBe("Changes 1–20 of 45");
    expect(prompt.querySelectorAll(".diff-em")).toHaveLength(20);
    const allow = within(prompt).getByTestId("allow-once") as HTMLButtonElement;
    expect(allow.disabled).toBe(true);
    expect(within(prompt).getByTestId("approval-see-all").textContent).toBe("Page through all 45 changes to allow this.");
    fireEvent.click(within(prompt).getByTestId("approval-next"));
    expect(allow.disabled).toBe(true);
    fireEvent.click(within(prompt).getByTestId("approval-next"));
    expect(within(prompt).getByTestId("approval-page").textContent).toBe("Changes 41–45 of 45");
    expect(prompt.textContent).toContain("https://phish.example/login");
    await waitFor(() => expect(allow.disabled).toBe(false));
    expect(within(prompt).queryByTestId("approval-see-all")).toBeNull();
  });

  it("reads diffs the record left out from the proposal, by id and hash", async () => {
    const bare = hunks.map(({ id, contentHash }) => ({ id, contentHash }));
    const { transport } = setupPanel({ log: applying({ ...base, hunks: bare }), status: "waitingForApproval" });
    transport.on("proposal.get", () => view({ id: "prp_1", summary: "全部改写", hunks: hunks.map((h) => ({ ...h, oldStart: 0, oldLen: 1, newStart: 0, newLen: 1, oldText: "", newText: "" })) }));
    const prompt = await screen.findByTestId("approval");
    await waitFor(() => expect(within(prompt).getByTestId("approval-page").textContent).toBe("Changes 1–20 of 45"));
    fireEvent.click(within(prompt).getByTestId("approval-next"));
    fireEvent.click(within(prompt).getByTestId("approval-next"));
    expect(prompt.textContent).toContain("https://phish.example/login");
    await waitFor(() => expect((within(prompt).getByTestId("allow-once") as HTMLButtonElement).disabled).toBe(false));
  });

  it("cannot be allowed when an older record left hunks out", async () => {
    setupPanel({ log: applying({ ...base, hunks: hunks.slice(0, 10), omittedHunks: 35, hunkSetHash: undefined }), status: "waitingForApproval", lang: "zh" });
    const prompt = await screen.findByTestId("approval");
    expect(within(prompt).getByTestId("approval-incomplete").textContent).toContain("只列出了 45 处修改中的 10 处");
    expect((within(prompt).getByTestId("allow-once") as HTMLButtonElement).disabled).toBe(true);
  });

  it("cannot be allowed when the proposal's hunks differ from the record", async () => {
    const bare = hunks.map(({ id, contentHash }) => ({ id, contentHash }));
    const { transport } = setupPanel({ log: applying({ ...base, hunks: bare }), status: "waitingForApproval" });
    transport.on("proposal.get", () => view({ id: "prp_1", hunks: hunks.map((h, i) => ({ ...h, contentHash: i === 3 ? "sha256:other" : h.contentHash, oldStart: 0, oldLen: 1, newStart: 0, newLen: 1, oldText: "", newText: "" })) }));
    const prompt = await screen.findByTestId("approval");
    await waitFor(() => expect(within(prompt).getByTestId("approval-incomplete").textContent).toContain("The proposal changed"));
    expect((within(prompt).getByTestId("allow-once") as HTMLButtonElement).disabled).toBe(true);
  });
});
