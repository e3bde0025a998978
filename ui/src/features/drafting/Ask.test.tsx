import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { Answer, SearchAskParams } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { AiPanel } from "./AiPanel";
import { AskView } from "./Ask";
import { answerHtml } from "./citations";
import { profile } from "../../shared/testing/fixtures";
import { Drafting } from "./store";

afterEach(() => cleanup());

/** The questions sent, without the request id each carries (it is random). */
function asked(transport: FakeTransport): unknown[] {
  return transport.callsTo("search.ask").map((p) => {
    const params = { ...(p as SearchAskParams) };
    expect(params.requestId).toMatch(/^ask_/);
    delete params.requestId;
    return params;
  });
}

function answer(over: Partial<Answer> = {}): Answer {
  return {
    answer: "水温九十度左右最好「水温九十度左右最好」[1]，旧稿写过两分半[ 2 ]，再说一次[1]，还有「每天五杯」[9]。",
    model: "fake",
    sources: [
      { n: 1, projectId: "prj_a", projectTitle: "手冲咖啡入门", kind: "working", version: null, commentId: null, span: { from: 10, to: 40 }, text: "…", tier: "title" },
      { n: 2, projectId: "prj_b", projectTitle: "旧稿", kind: "version", version: 3, commentId: null, span: { from: 5, to: 20 }, text: "…", tier: "body" },
      { n: 3, projectId: "prj_c", projectTitle: "评论", kind: "comment", version: null, commentId: "cmt_1", span: { from: 0, to: 8 }, text: "…", tier: "body" },
    ],
    citations: [
      { n: 1, projectId: "prj_a", kind: "working", version: null, commentId: null, span: { from: 12, to: 21 } },
      { n: 2, projectId: "prj_b", kind: "version", version: 3, commentId: null, span: { from: 5, to: 20 } },
    ],
    quotes: [
      { text: "水温九十度左右最好", found: true, source: 1, span: { from: 12, to: 21 } },
      { text: "每天五杯", found: false, source: null, span: null },
    ],
    unknownCitations: [9],
    retrieved: 3,
    cited: 2,
    footer: "检索 3 篇，引用 2 篇 / retrieved 3, cited 2",
    notice: null,
    cached: false,
    reranked: false,
    route: "material",
    routeChosen: false,
    ...over,
  };
}

function setup({ lang = "en" as Lang, reply = (_p: SearchAskParams): Answer => answer() } = {}) {
  const transport = new FakeTransport().on("search.ask", (p) => reply(p));
  const onOpen = vi.fn();
  render(
    <WithCtx ctx={makeCtx(transport, lang)}>
      <AskView projectId="prj_self" onOpenSource={onOpen} />
    </WithCtx>,
  );
  const ask = (q: string) => {
    fireEvent.change(screen.getByTestId("ask-question"), { target: { value: q } });
    fireEvent.keyDown(screen.getByTestId("ask-question"), { key: "Enter" });
  };
  return { transport, onOpen, ask };
}

describe("Ask", () => {
  it("answers with Markdown, citations that open their source at the span, a marked failed citation and the engine's footer", async () => {
    const { transport, onOpen, ask } = setup();
    expect(screen.getByTestId("ask-empty").textContent).toContain("Ask your own writing");
    ask("手冲咖啡的水温");
    await screen.findByTestId("ask-result");
    expect(asked(transport)).toEqual([{ q: "手冲咖啡的水温" }]);
    // Each source is linked at its first mention; a later mention is a plain mark.
    const cites = screen.getAllByTestId("cite");
    expect(cites.map((c) => c.textContent)).toEqual(["[1]", "[2]"]);
    expect(cites[0]!.getAttribute("aria-label")).toBe("Open source 1: 手冲咖啡入门");
    expect(screen.getByTestId("ask-answer-text").querySelectorAll("[data-cite-again]")).toHaveLength(1);
    fireEvent.click(cites[0]!);
    expect(onOpen).toHaveBeenLastCalledWith({ projectId: "prj_a", span: { from: 12, to: 21 }, version: null, commentId: null });
    fireEvent.click(cites[1]!);
    expect(onOpen).toHaveBeenLastCalledWith({ projectId: "prj_b", span: { from: 5, to: 20 }, version: 3, commentId: null });
    // [9] names no source: marked, not hidden, and said in words with the quote not found.
    const failed = screen.getByTestId("cite-failed");
    expect(failed.textContent).toBe("[9]");
    expect(failed.tagName).toBe("SPAN");
    const check = screen.getByTestId("ask-check-failed").textContent;
    expect(check).toContain("These citations name no source: [9]");
    expect(check).toContain("Not found in the sources: “每天五杯”");
    expect(screen.getByTestId("ask-footer").textContent).toBe("Retrieved 3, cited 2");
    expect(screen.getByTestId("ask-route").textContent).toBe("From your writing · chosen automatically");
    // The sources list opens them too; a comment opens at the comment, not a span in the text.
    const sources = within(screen.getByTestId("ask-sources")).getAllByTestId("ask-source");
    fireEvent.click(sources[2]!);
    expect(onOpen).toHaveBeenLastCalledWith({ projectId: "prj_c", span: null, version: null, commentId: "cmt_1" });
  });

  it("renders Markdown and leaves citation-like text inside tags alone", () => {
    const html = answerHtml(answer({ answer: "**粗体**[1] and `code`\n\n- 条目¹", citations: [answer().citations[0]!], unknownCitations: [] }), {
      open: (n) => `open ${n}`,
      failed: (n) => `failed ${n}`,
    });
    expect(html).toContain("<strong>粗体</strong><button");
    expect(html).toContain("<code>code</code>");
    // The superscript names the same source again: a plain mark after the first link.
    expect(html).toContain('<li>条目<span class="cite" data-cite-again="1">[1]</span></li>');
  });

  it("shows the route and lets the person override it; a general answer has no sources", async () => {
    const { transport, ask } = setup({
      reply: (p) =>
        p.route === "general"
          ? answer({ answer: "量子纠缠是一种关联。", sources: [], citations: [], quotes: [], unknownCitations: [], retrieved: 0, cited: 0, footer: "检索 0 篇，引用 0 篇 / retrieved 0, cited 0", route: "general", routeChosen: true })
          : answer(),
    });
    ask("什么是量子纠缠");
    await screen.findByTestId("ask-result");
    const reroute = screen.getByTestId("ask-reroute");
    expect(reroute.textContent).toBe("Answer directly instead");
    fireEvent.click(reroute);
    await waitFor(() => expect(screen.getByTestId("ask-route").getAttribute("data-route")).toBe("general"));
    expect(asked(transport)[1]).toEqual({ q: "什么是量子纠缠", route: "general" });
    expect(screen.getByTestId("ask-route").textContent).toBe("Answered directly, without your writing");
    expect(screen.queryByTestId("ask-sources")).toBeNull();
    expect(screen.queryAllByTestId("cite")).toHaveLength(0);
    expect(screen.getByTestId("ask-reroute").textContent).toBe("Search my writing instead");
    // Chosen before asking, and scoped to this project.
    fireEvent.change(screen.getByTestId("ask-route-choice"), { target: { value: "material" } });
    fireEvent.click(screen.getByTestId("ask-project-only"));
    fireEvent.click(screen.getByTestId("ask-submit"));
    await waitFor(() => expect(asked(transport)).toHaveLength(3));
    expect(asked(transport)[2]).toEqual({ q: "什么是量子纠缠", projectId: "prj_self", route: "material" });
  });

  it("marks a cached answer and asks again fresh", async () => {
    let n = 0;
    const { transport, ask } = setup({ reply: () => answer({ cached: n++ === 0 }) });
    ask("手冲咖啡的水温");
    await screen.findByTestId("ask-cached");
    expect(screen.getByTestId("ask-cached").textContent).toBe("Cached answer");
    fireEvent.click(screen.getByTestId("ask-fresh"));
    await waitFor(() => expect(screen.queryByTestId("ask-cached")).toBeNull());
    expect(asked(transport)[1]).toEqual({ q: "手冲咖啡的水温", fresh: true });
  });

  it("says plainly when nothing matched, shows errors by code with a retry, and speaks Chinese", async () => {
    let fail = true;
    const { ask } = setup({
      lang: "zh",
      reply: () => {
        if (fail) throw apiError("PROVIDER_UNAVAILABLE", "down");
        return answer({ answer: "", sources: [], citations: [], quotes: [], unknownCitations: [], retrieved: 0, cited: 0, footer: "检索 0 篇，引用 0 篇 / retrieved 0, cited 0", route: "material", routeChosen: true });
      },
    });
    expect(screen.getByTestId("ask-empty").textContent).toContain("向你写过的内容提问");
    ask("灯塔");
    await screen.findByTestId("error-banner");
    expect(screen.getByTestId("error-banner").getAttribute("data-code")).toBe("PROVIDER_UNAVAILABLE");
    fail = false;
    fireEvent.click(within(screen.getByTestId("error-banner")).getByRole("button", { name: "重试" }));
    await screen.findByTestId("ask-nothing");
    expect(screen.getByTestId("ask-nothing").textContent).toBe("你的资料中没有与问题相关的内容，未调用模型。");
    expect(screen.getByTestId("ask-route").textContent).toBe("依据你的资料");
    expect(screen.getByTestId("ask-reroute").textContent).toBe("改为直接回答");
    expect(screen.getByTestId("ask-footer").textContent).toBe("检索 0 篇，引用 0 篇");
  });

  it("asks with Enter but not during an IME composition or with Shift+Enter", () => {
    const { transport } = setup();
    const field = screen.getByTestId("ask-question");
    fireEvent.change(field, { target: { value: "水温" } });
    fireEvent.keyDown(field, { key: "Enter", isComposing: true });
    fireEvent.keyDown(field, { key: "Enter", keyCode: 229 });
    fireEvent.keyDown(field, { key: "Enter", shiftKey: true });
    expect(asked(transport)).toEqual([]);
    fireEvent.keyDown(field, { key: "Enter" });
    expect(asked(transport)).toHaveLength(1);
  });

  it("is a mode of the AI panel, reachable by buttons that say which is on", async () => {
    const transport = new FakeTransport()
      .on("app.info", () => ({ version: "0.1.0", dataDir: "/d", os: "Linux", schemaVersion: 3, methods: [], streamingMethods: [] }))
      .on("llmProfile.list", () => ({ profiles: [profile()], envKeyActive: false }))
      .on("session.list", () => ({ sessions: [] }))
      .on("search.ask", () => answer());
    const ctx = makeCtx(transport, "en");
    const onOpen = vi.fn();
    render(
      <WithCtx ctx={ctx}>
        <AiPanel
          drafting={new Drafting(ctx.client, "prj_self")}
          selectionText=""
          getSelection={() => null}
          onReview={() => undefined}
          onSetUpModel={() => undefined}
          workingCopy={{ flush: async () => undefined, revision: () => 1, replace: () => undefined }}
          onOpenSource={onOpen}
        />
      </WithCtx>,
    );
    const askMode = await screen.findByTestId("ai-mode-ask");
    expect(askMode.getAttribute("aria-pressed")).toBe("false");
    fireEvent.click(askMode);
    expect(screen.getByTestId("ai-mode-ask").getAttribute("aria-pressed")).toBe("true");
    fireEvent.change(screen.getByTestId("ask-question"), { target: { value: "水温" } });
    fireEvent.click(screen.getByTestId("ask-submit"));
    fireEvent.click((await screen.findAllByTestId("cite"))[0]!);
    expect(onOpen).toHaveBeenCalledWith({ projectId: "prj_a", span: { from: 12, to: 21 }, version: null, commentId: null });
    fireEvent.click(screen.getByTestId("ai-mode-sessions"));
    expect(screen.queryByTestId("ask")).toBeNull();
  });

  it("stops a running question with Stop or Esc, keeping the question", async () => {
    let release: (a: Answer) => void = () => undefined;
    const { transport, ask } = setup({ reply: () => new Promise<Answer>((resolve) => (release = resolve)) as unknown as Answer });
    transport.on("search.askCancel", () => ({ cancelled: true }));
    ask("手冲咖啡的水温");
    fireEvent.click(await screen.findByTestId("ask-stop"));
    const sentId = (transport.callsTo("search.ask")[0] as SearchAskParams).requestId;
    expect(transport.callsTo("search.askCancel")).toEqual([{ requestId: sentId }]);
    expect(screen.queryByTestId("ask-busy")).toBeNull();
    expect(screen.getByTestId("ask-stopped")).toBeTruthy();
    expect((screen.getByTestId("ask-question") as HTMLTextAreaElement).value).toBe("手冲咖啡的水温");
    // A late answer to the stopped question is not shown.
    release(answer());
    await new Promise((r) => setTimeout(r, 0));
    expect(screen.queryByTestId("ask-result")).toBeNull();
    // Esc stops the next one.
    fireEvent.keyDown(screen.getByTestId("ask-question"), { key: "Enter" });
    await screen.findByTestId("ask-stop");
    fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(transport.callsTo("search.askCancel")).toHaveLength(2));
    expect(screen.queryByTestId("ask-busy")).toBeNull();
  });
});
