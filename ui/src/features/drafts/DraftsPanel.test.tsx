import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { Platform } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { COMPILE_DEBOUNCE_MS, DraftsPanel } from "./DraftsPanel";
import { draftPlainText } from "./draftText";
import { compiled, finding, HTML } from "./drafts.fixture";

function setup(platforms: Platform[] = [], lang: "en" | "zh" = "en") {
  let rev = 0;
  const transport = new FakeTransport()
    .on("pipeline.compile", () => compiled(++rev, `春天最佳 r${rev}`))
    .on("platformDraft.list", () => ({ projectId: "p", sourceRevision: rev, drafts: [], findings: [] }));
  const toasts: string[] = [];
  const jumps: [number, number, string | null | undefined][] = [];
  const ctx = makeCtx(transport, lang, { toast: (s) => toasts.push(s) });
  const view = (revision: number) => (
    <WithCtx ctx={ctx}>
      <DraftsPanel projectId="p" revision={revision} platforms={platforms} onJump={(f, t, m) => jumps.push([f, t, m])} />
    </WithCtx>
  );
  const r = render(view(1));
  return { transport, toasts, jumps, rerender: (n: number) => r.rerender(view(n)) };
}

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("DraftsPanel", () => {
  it("shows a tab per platform (all five when the project has none) and each preview", async () => {
    setup([], "zh");
    await screen.findByTestId("preview-wechat");
    expect(["wechat", "zhihu", "x", "douyin", "xiaohongshu"].map((p) => screen.getByTestId(`draft-tab-${p}`).textContent)).toEqual([
      "微信公众号",
      "知乎",
      "X",
      "抖音",
      "小红书",
    ]);
    // The profile by its name; its id stays for the tooltip.
    expect(screen.getByTestId("draft-profile").textContent).toBe("微信公众号草稿规则 v1");
    expect(screen.getByTestId("draft-profile").getAttribute("title")).toBe("wechat@draft-v1");
    // WeChat: the compiled HTML in a sandboxed frame at phone width.
    const frame = screen.getByTestId("preview-wechat").querySelector("iframe")!;
    expect(frame.getAttribute("sandbox")).toBe("");
    expect(frame.getAttribute("width")).toBe("375");
    expect(frame.getAttribute("srcdoc")).toContain(HTML);
    // Zhihu: rendered Markdown.
    fireEvent.click(screen.getByTestId("draft-tab-zhihu"));
    expect(screen.getByTestId("preview-zhihu").querySelector("h2")?.textContent).toBe("小节");
    // X: a card per post with its counter, red when over 280.
    fireEvent.click(screen.getByTestId("draft-tab-x"));
    const counts = screen.getAllByTestId("x-count");
    expect(counts.map((c) => c.textContent)).toEqual(["12/280", "300/280"]);
    expect(counts.map((c) => c.dataset.over)).toEqual(["false", "true"]);
    expect(counts[1].className).toContain("over");
    // Douyin and Xiaohongshu: cards with title, body and tags.
    fireEvent.click(screen.getByTestId("draft-tab-xiaohongshu"));
    const card = screen.getByTestId("preview-xiaohongshu");
    expect(card.querySelector(".card-title")?.textContent).toBe("小红书标题");
    expect(card.textContent).toContain("#春天");
    fireEvent.click(screen.getByTestId("draft-tab-douyin"));
    const douyin = screen.getByTestId("preview-douyin");
    expect(douyin.querySelector(".card-title")?.textContent).toBe("抖音标题");
    // Douyin's caption carries its topics: they show once, not again below it.
    expect(douyin.textContent!.split("#春天").length - 1).toBe(1);
    expect(douyin.querySelector(".card-tags")).toBeNull();
    expect(screen.queryByTestId("draft-tags")).toBeNull();
    // Other platforms: suggested tags as chips.
    fireEvent.click(screen.getByTestId("draft-tab-wechat"));
    expect(screen.getByTestId("draft-tags").textContent).toBe("#春天#写作");
  });

  it("marks every platform tab with a must-fix finding, the source's included", async () => {
    const withBlock = (revision: number) => {
      const r = compiled(revision);
      return { ...r, findings: [...r.findings, finding({ check: "brand_banned_word", severity: "block", matched: "爆款", message: "banned" })] };
    };
    const transport = new FakeTransport()
      .on("pipeline.compile", () => withBlock(1))
      .on("platformDraft.list", () => ({ projectId: "p", sourceRevision: 1, drafts: [], findings: [] }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <DraftsPanel projectId="p" revision={1} platforms={[]} onJump={() => undefined} />
      </WithCtx>,
    );
    await screen.findByTestId("preview-wechat");
    const dotted = () => ["wechat", "zhihu", "x", "douyin", "xiaohongshu"].filter((p) => screen.getByTestId(`draft-tab-${p}`).querySelector(".dot-block"));
    expect(dotted()).toEqual(["wechat", "zhihu", "x", "douyin", "xiaohongshu"]);
    cleanup();
    // Without it, only the platform whose draft has one.
    setup();
    await screen.findByTestId("preview-wechat");
    expect(dotted()).toEqual(["x"]);
  });

  it("only shows the project's target platforms", async () => {
    setup(["x", "wechat"]);
    await screen.findByTestId("preview-wechat");
    expect(screen.queryByTestId("draft-tab-zhihu")).toBeNull();
    expect(screen.getAllByRole("tab").map((b) => b.dataset.testid)).toEqual(["draft-tab-wechat", "draft-tab-x"]);
    // Arrow keys move between platforms.
    fireEvent.keyDown(screen.getByTestId("draft-tab-wechat"), { key: "ArrowRight" });
    expect(screen.getByTestId("draft-tab-x").getAttribute("aria-selected")).toBe("true");
    expect(screen.getByTestId("preview-x")).toBeTruthy();
    fireEvent.keyDown(screen.getByTestId("draft-tab-x"), { key: "ArrowRight" });
    expect(screen.getByTestId("draft-tab-wechat").getAttribute("aria-selected")).toBe("true");
  });

  it("lists source and platform findings by severity; a finding with a span jumps to it", async () => {
    const { jumps } = setup();
    await screen.findByTestId("preview-wechat");
    let items = screen.getAllByTestId("finding");
    // WeChat: the source ad_law finding only (the AI reminder is for Douyin).
    expect(items.map((i) => i.dataset.check)).toEqual(["ad_law"]);
    expect(items[0].textContent).toContain("“最佳” is an absolute term");
    expect(items[0].textContent).toContain("Add scope and evidence");
    fireEvent.click(items[0].querySelector("[data-testid=finding-jump]")!);
    expect(jumps).toEqual([[2, 4, "最佳"]]);
    fireEvent.click(screen.getByTestId("draft-tab-x"));
    items = screen.getAllByTestId("finding");
    expect(items.map((i) => `${i.dataset.check}:${i.dataset.severity}`)).toEqual(["limit.post:block", "ad_law:warn"]);
    expect(screen.getByTestId("findings-summary").textContent).toBe("1 to fix1 to check");
    // No span: nothing to click.
    expect(items[0].querySelector("[data-testid=finding-jump]")).toBeNull();
    fireEvent.click(screen.getByTestId("draft-tab-douyin"));
    expect(screen.getAllByTestId("finding").map((i) => i.dataset.check)).toEqual(["ad_law", "ai_declaration"]);
  });

  it("recompiles, debounced, when the revision changes", async () => {
    const { transport, rerender } = setup();
    await screen.findByTestId("preview-wechat");
    expect(transport.callsTo("pipeline.compile")).toEqual([{ projectId: "p" }]);
    vi.useFakeTimers();
    rerender(2);
    rerender(3);
    rerender(4);
    await act(async () => {
      vi.advanceTimersByTime(COMPILE_DEBOUNCE_MS - 50);
    });
    expect(transport.callsTo("pipeline.compile")).toHaveLength(1);
    await act(async () => {
      vi.advanceTimersByTime(100);
    });
    expect(transport.callsTo("pipeline.compile")).toHaveLength(2);
    vi.useRealTimers();
    fireEvent.click(screen.getByTestId("draft-tab-x"));
    await waitFor(() => expect(screen.getAllByTestId("x-post")[0].textContent).toContain("r2"));
  });

  it("shows progress while a compile is slow, and an error with retry when it fails", async () => {
    let release: () => void = () => undefined;
    let fail = true;
    const transport = new FakeTransport().on("pipeline.compile", async () => {
      if (fail) {
        fail = false;
        throw { code: "NOT_FOUND", message: "no project", hints: [] };
      }
      await new Promise<void>((r) => (release = r));
      return compiled(1);
    });
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <DraftsPanel projectId="p" revision={1} platforms={[]} onJump={() => undefined} />
      </WithCtx>,
    );
    await screen.findByTestId("error-banner");
    fireEvent.click(screen.getByText("重试"));
    await waitFor(() => expect(screen.getByTestId("drafts-compiling").textContent).toContain("正在编译 5 个平台草稿"));
    release();
    await screen.findByTestId("preview-wechat");
    expect(screen.queryByTestId("drafts-compiling")).toBeNull();
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });

  it("copies WeChat as text/html (exactly the compiled HTML) plus text/plain, others as plain text", async () => {
    const written: Record<string, string>[] = [];
    const plain: string[] = [];
    class FakeItem {
      constructor(readonly items: Record<string, Blob>) {}
    }
    vi.stubGlobal("ClipboardItem", FakeItem);
    Object.defineProperty(navigator, "clipboard", {
      configurable: true,
      value: {
        write: async (items: FakeItem[]) => {
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(items[0].items)) out[k] = await v.text();
          written.push(out);
        },
        writeText: async (s: string) => void plain.push(s),
      },
    });
    const { toasts } = setup();
    await screen.findByTestId("preview-wechat");
    fireEvent.click(screen.getByTestId("draft-copy"));
    await waitFor(() => expect(written).toHaveLength(1));
    expect(written[0]["text/html"]).toBe(HTML);
    expect(written[0]["text/plain"]).toBe("春天 最佳");
    await waitFor(() => expect(toasts).toEqual(["Copied"]));
    fireEvent.click(screen.getByTestId("draft-tab-x"));
    fireEvent.click(screen.getByTestId("draft-copy"));
    await waitFor(() => expect(plain).toHaveLength(1));
    expect(plain[0]).toBe("1/2 春天最佳 r1\n\n2/2 long");
    expect(written).toHaveLength(1);
  });

  it("falls back to writeText when the rich clipboard is refused", async () => {
    const plain: string[] = [];
    vi.stubGlobal(
      "ClipboardItem",
      class {
        constructor(readonly items: Record<string, Blob>) {}
      },
    );
    Object.defineProperty(navigator, "clipboard", {
      configurable: true,
      value: {
        write: async () => {
          throw new Error("denied");
        },
        writeText: async (s: string) => void plain.push(s),
      },
    });
    const { toasts } = setup([], "zh");
    await screen.findByTestId("preview-wechat");
    fireEvent.click(screen.getByTestId("draft-copy"));
    await waitFor(() => expect(plain).toEqual(["春天 最佳"]));
    await waitFor(() => expect(toasts).toEqual(["已复制"]));
  });

  it("shows project images in the WeChat and Zhihu previews, while copy keeps the compiled HTML", async () => {
    const html = '<section style="margin: 0;"><figure style="margin: 0;"><img src="media/cover.png" alt="c"></figure></section>';
    const result = compiled(1);
    result.drafts[0].draft.content = { type: "html", html, digest: "" };
    result.drafts[1].draft.content = { type: "markdown", markdown: "![c](media/cover.png)" };
    const transport = new FakeTransport()
      .on("pipeline.compile", () => result)
      .on("media.list", () => ({ media: [{ id: "med_1", fileName: "cover.png" } as never] }))
      .on("media.read", () => ({ asset: { id: "med_1", mimeType: "image/png" } as never, dataBase64: "AAAA" }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <DraftsPanel projectId="pm" revision={1} platforms={[]} onJump={() => undefined} />
      </WithCtx>,
    );
    await screen.findByTestId("preview-wechat");
    await waitFor(() =>
      expect(screen.getByTestId("preview-wechat").querySelector("iframe")!.getAttribute("srcdoc")).toContain('src="data:image/png;base64,AAAA"'),
    );
    fireEvent.click(screen.getByTestId("draft-tab-zhihu"));
    await waitFor(() => expect(screen.getByTestId("preview-zhihu").querySelector("img")!.getAttribute("src")).toBe("data:image/png;base64,AAAA"));
  });

  it("plain text of cards keeps title, body and tags once", () => {
    const c = compiled(1);
    expect(draftPlainText(c.drafts[3].draft)).toBe("抖音标题\n\n春天最佳\n\n#春天 #写作");
    expect(draftPlainText(c.drafts[4].draft)).toBe("小红书标题\n\n春天最佳\n\n#春天");
    expect(draftPlainText(c.drafts[1].draft)).toBe("## 小节\n\n春天最佳");
  });
});
