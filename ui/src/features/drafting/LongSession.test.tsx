import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import postcss from "postcss";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../shared/api/client";
import { FakeTransport } from "../../shared/api/fake";
import type { MemoryItem, MemoryListResult, SessionPins } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { compactBoundary, ev, resetSeq, session } from "../../shared/testing/fixtures";
import { LongSessionBar } from "./LongSession";
import { BoundaryLine } from "./BoundaryLine";
import { SessionStore } from "./store";
import { MemoryList } from "../memory";
import { fold } from "./testLog";
import { emptyTimeline } from "./timeline";
import type { HarnessEvent } from "../../shared/api/client";

afterEach(() => cleanup());

const item = (id: string, status: MemoryItem["status"], text: string): MemoryItem => ({
  id,
  scope: { type: "workspace" },
  scopeId: "wsp_1",
  text,
  status,
  origin: status === "proposed" ? { type: "model", sessionId: "ses_1", toolUseId: "c1" } : { type: "person" },
  createdAt: "",
  updatedAt: "",
});

describe("MemoryList", () => {
  it("confirms what the assistant proposed, shows habits with their sources, and removes them", async () => {
    let list: MemoryListResult = {
      items: [item("mem_1", "proposed", "这个品牌不用标题党")],
      habits: [{ id: "rejected:abc", kind: "rejected_style", text: "The person rejected work because: 太吵", sources: ["prp_9"] }],
      budgetTokens: 800,
      usedTokens: 20,
    };
    const transport = new FakeTransport()
      .on("memory.list", () => list)
      .on("memory.confirm", () => {
        list = { ...list, items: [item("mem_1", "confirmed", "这个品牌不用标题党")] };
        return list.items[0];
      })
      .on("memory.dismissHabit", () => {
        list = { ...list, habits: [] };
        return { id: "rejected:abc", deleted: true };
      });
    render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <MemoryList projectId="prj_1" />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("memory-item").getAttribute("data-status")).toBe("proposed"));
    expect(screen.getByTestId("memory-item").textContent).toContain("suggested by the assistant");
    expect(screen.getByTestId("habit").textContent).toContain("from prp_9");
    fireEvent.click(screen.getByTestId("memory-confirm"));
    await waitFor(() => expect(screen.getByTestId("memory-item").getAttribute("data-status")).toBe("confirmed"));
    expect(transport.callsTo("memory.confirm")).toEqual([{ memoryId: "mem_1" }]);
    fireEvent.click(screen.getByTestId("habit-remove"));
    await waitFor(() => expect(screen.queryByTestId("habit")).toBeNull());
    expect(transport.callsTo("memory.dismissHabit")).toEqual([{ habitId: "rejected:abc" }]);
  });
});

describe("compact boundaries", () => {
  it("fold into a line that expands to the summary, and a truncation raises the banner flag", () => {
    const boundary = (sequence: number, mode: "summarized" | "truncated") =>
      ({
        eventId: `evt_${sequence}`,
        sequence,
        createdAt: "",
        modelVisible: true,
        kind: "compact_boundary",
        payload: {
          trigger: "auto",
          mode,
          summaryText: "# Earlier conversation (summarised; the full log is kept)\nDrafted the intro.",
          keptMessages: 2,
          compactedMessages: 40,
          pinnedInstructions: [],
          tokensBefore: 5000,
          tokensAfter: 900,
          note: mode === "truncated" ? "40 earlier messages were removed without a summary" : "Earlier conversation summarised",
          inputTokens: mode === "truncated" ? 0 : 4200,
          outputTokens: mode === "truncated" ? 0 : 180,
        },
      }) as HarnessEvent;
    const s = fold(emptyTimeline, boundary(1, "summarized"));
    expect(s.truncated).toBe(false);
    const it0 = s.items[0];
    if (it0?.kind !== "boundary") throw new Error("no boundary item");
    render(
      <WithCtx ctx={makeCtx(new FakeTransport(), "en")}>
        <BoundaryLine item={it0} />
      </WithCtx>,
    );
    expect(screen.getByTestId("compact-boundary-toggle").textContent).toBe("Earlier conversation summarised (40 messages)");
    expect(screen.queryByTestId("compact-boundary-summary")).toBeNull();
    fireEvent.click(screen.getByTestId("compact-boundary-toggle"));
    expect(screen.getByTestId("compact-boundary-summary").textContent).toContain("Drafted the intro.");
    expect(fold(s, boundary(2, "truncated")).truncated).toBe(true);
  });
});

describe("a compaction summary", () => {
  it("reads in normal type, part by part in the person's language, wrapped inside the panel", () => {
    resetSeq();
    const item = fold(emptyTimeline, ev(compactBoundary())).items[0];
    if (item?.kind !== "boundary") throw new Error("no boundary item");
    render(
      <WithCtx ctx={makeCtx(new FakeTransport(), "zh")}>
        <BoundaryLine item={item} />
      </WithCtx>,
    );
    fireEvent.click(screen.getByTestId("compact-boundary-toggle"));
    const summary = screen.getByTestId("compact-boundary-summary");
    expect(summary.tagName).not.toBe("PRE");
    expect(summary.querySelector("pre, code")).toBeNull();
    expect(summary.textContent).toContain("概要我们把三个步骤改短了");
    expect(summary.textContent).toContain("下一步给标题三个候选");
    expect(summary.textContent).toContain("prp_1 → 第 2 版");
    expect(summary.textContent).not.toContain("# Earlier conversation");
    const css = postcss.parse(readFileSync(join(__dirname, "..", "..", "app", "styles.css"), "utf8"));
    const decls: Record<string, string> = {};
    css.walkRules((r) => {
      if (r.selectors.includes(".boundary-summary")) r.walkDecls((d) => void (decls[d.prop] = d.value));
    });
    expect(decls).toMatchObject({ "white-space": "pre-wrap", "overflow-wrap": "anywhere", "font-family": "inherit" });
  });
});

describe("the long-session row", () => {
  const pins: SessionPins = { pins: [], pinsTokens: 0, pinnedTokens: 250, contextWindow: 8192, pinnedPercent: 3, pinBudgetTokens: 900, pinsFit: true };
  function mount(lang: Lang) {
    const transport = new FakeTransport()
      .on("session.intent", () => ({
        intent: { topic: "tea culture", outputType: "copy", platforms: ["zhihu"], length: { value: 800, unit: "words" } },
        modelText: "",
      }))
      .on("session.pins", () => pins)
      .on("memory.list", () => ({ items: [], habits: [], budgetTokens: 800, usedTokens: 0 }));
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    render(
      <WithCtx ctx={makeCtx(transport, lang)}>
        <LongSessionBar store={store} />
      </WithCtx>,
    );
    return transport;
  }

  it("a long intent is a chip that can be cut short, with the whole intent as its title; memory stays a button beside it", async () => {
    mount("en");
    const chip = screen.getByTestId("intent-toggle");
    await waitFor(() => expect(chip.textContent).toBe("Intent: tea culture · Copy · Zhihu · 800 words"));
    expect(chip.classList.contains("intent-chip")).toBe(true);
    expect(chip.getAttribute("title")).toBe("Intent: tea culture · Copy · Zhihu · 800 words");
    const row = chip.parentElement!;
    expect(row.classList.contains("extras-bar")).toBe(true);
    expect([...row.children].map((b) => b.getAttribute("data-testid"))).toEqual(["intent-toggle", "pins-toggle", "memory-toggle"]);
    fireEvent.click(screen.getByTestId("memory-toggle"));
    expect(screen.getByTestId("memory-toggle").getAttribute("aria-expanded")).toBe("true");
    cleanup();
    mount("zh");
    await waitFor(() => expect(screen.getByTestId("intent-toggle").getAttribute("title")).toMatch(/^意图：tea culture · /));
  });

  it("what the assistant will first ask is said inside the intent chip, so its arrival adds no line above the conversation", async () => {
    const transport = new FakeTransport()
      .on("session.intent", () => ({ intent: { platforms: [] }, clarification: { missing: ["platform", "length"], question: "Which platform, how long?" }, modelText: "" }))
      .on("session.pins", () => pins)
      .on("memory.list", () => ({ items: [], habits: [], budgetTokens: 800, usedTokens: 0 }));
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <LongSessionBar store={store} />
      </WithCtx>,
    );
    const bar = screen.getByTestId("long-session");
    const before = [...bar.children].map((c) => c.className);
    const clarify = await screen.findByTestId("intent-clarify");
    expect(clarify.closest("[data-testid=intent-toggle]")).toBe(screen.getByTestId("intent-toggle"));
    expect(screen.getByTestId("intent-toggle").getAttribute("title")).toBe("意图：未设定 · 助手会先问清：发哪个平台、多长。");
    expect([...bar.children].map((c) => c.className)).toEqual(before);
  });

  it("pins over their budget are said in the pin list, with what to do, in the person's language", async () => {
    const over: SessionPins = {
      pins: [{ id: "pin_1", text: "记住：品牌名写作山茶社。".repeat(40), source: "person" }],
      pinsTokens: 520,
      pinnedTokens: 900,
      contextWindow: 4096,
      pinnedPercent: 22,
      pinBudgetTokens: 230,
      pinsFit: false,
    };
    for (const [lang, text] of [
      ["en", "The pins take about 520 tokens and only 230 fit this model’s window"],
      ["zh", "固定内容约占 520 词元，该模型的窗口只放得下 230"],
    ] as const) {
      const transport = new FakeTransport()
        .on("session.intent", () => ({ intent: { platforms: [] }, modelText: "" }))
        .on("session.pins", () => over)
        .on("memory.list", () => ({ items: [], habits: [], budgetTokens: 800, usedTokens: 0 }));
      const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
      render(
        <WithCtx ctx={makeCtx(transport, lang)}>
          <LongSessionBar store={store} />
        </WithCtx>,
      );
      await waitFor(() => expect(screen.getByTestId("pins-toggle").textContent).toMatch(/1/));
      fireEvent.click(screen.getByTestId("pins-toggle"));
      expect((await screen.findByTestId("pins-over")).textContent).toContain(text);
      cleanup();
    }
    const fits = new FakeTransport()
      .on("session.intent", () => ({ intent: { platforms: [] }, modelText: "" }))
      .on("session.pins", () => ({ ...over, pinsFit: true }))
      .on("memory.list", () => ({ items: [], habits: [], budgetTokens: 800, usedTokens: 0 }));
    render(
      <WithCtx ctx={makeCtx(fits, "en")}>
        <LongSessionBar store={new SessionStore(new ApiClient(fits), session(), "prj_1")} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("pins-toggle").textContent).toMatch(/1/));
    fireEvent.click(screen.getByTestId("pins-toggle"));
    expect(screen.getByTestId("pins-budget")).toBeTruthy();
    expect(screen.queryByTestId("pins-over")).toBeNull();
  });

  it("the stylesheet wraps the row and ellipsizes the intent chip, so nothing leaves the panel", () => {
    const css = postcss.parse(readFileSync(join(__dirname, "..", "..", "app", "styles.css"), "utf8"));
    const decls = (selector: string) => {
      const out: Record<string, string> = {};
      css.walkRules((r) => {
        if (r.selectors.includes(selector)) r.walkDecls((d) => void (out[d.prop] = d.value));
      });
      return out;
    };
    expect(decls(".long-session .extras-bar")).toMatchObject({ "flex-wrap": "wrap", "min-width": "0" });
    expect(decls(".long-session .extras-bar > button")).toMatchObject({ "max-width": "100%", "text-overflow": "ellipsis", overflow: "hidden", "white-space": "nowrap" });
    const chip = decls(".long-session .extras-bar > .intent-chip");
    expect(chip["min-width"]).toBe("0");
    expect(chip.flex).toMatch(/^1 1 /);
  });
});
