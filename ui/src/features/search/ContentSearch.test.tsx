import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { SearchHit } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { ContentSearch } from "./ContentSearch";

afterEach(() => cleanup());

const hit = (over: Partial<SearchHit>): SearchHit => ({
  projectId: "prj_1",
  projectTitle: "手冲咖啡入门",
  archived: false,
  kind: "working",
  version: null,
  commentId: null,
  title: "手冲咖啡入门",
  span: { from: 10, to: 12 },
  // "😀" is two UTF-16 units: the highlight counts them as the engine does.
  snippet: { text: "😀 水温九十度", highlights: [{ from: 3, to: 5 }] },
  tier: "body",
  score: 0.03,
  alsoIn: [],
  ...over,
});

describe("ContentSearch", () => {
  it("searches the text as the person types, marks the match and opens the hit", async () => {
    const transport = new FakeTransport().on("search.query", () => ({
      hits: [hit({ alsoIn: [1, 4] }), hit({ projectId: "prj_2", projectTitle: "旧稿", kind: "version", version: 3 })],
      semantic: false,
      notice: { code: "semanticOff", message: "No embedding model is configured." },
    }));
    const opened: SearchHit[] = [];
    const { rerender } = render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <ContentSearch query="" onOpen={(h) => opened.push(h)} />
      </WithCtx>,
    );
    expect(screen.queryByTestId("content-search")).toBeNull();
    rerender(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <ContentSearch query=" 水温 " onOpen={(h) => opened.push(h)} />
      </WithCtx>,
    );
    const hits = await screen.findAllByTestId("search-hit");
    expect(transport.callsTo("search.query")).toEqual([{ q: "水温", limit: 20 }]);
    expect(hits[0].querySelector("mark")?.textContent).toBe("水温");
    expect(hits[1].textContent).toContain("第 3 版");
    // The working copy speaks for the project; older versions holding the match are named under it.
    expect(hits[0].textContent).toContain("当前稿 · 旧版本 v1, v4 中也有");
    expect(hits[1].textContent).not.toContain("旧版本");
    // Without an embedding model nothing is said: lexical search is the normal case.
    expect(screen.queryByText(/向量模型/)).toBeNull();
    fireEvent.click(hits[1]);
    expect(opened.map((h) => h.version)).toEqual([3]);
  });

  it("says when nothing matches and when the embedding model failed", async () => {
    const transport = new FakeTransport().on("search.query", ({ q }) =>
      q === "无"
        ? { hits: [], semantic: false, notice: null }
        : { hits: [hit({})], semantic: false, notice: { code: "semanticFailed", message: "down" } },
    );
    const { rerender } = render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <ContentSearch query="无" onOpen={() => undefined} />
      </WithCtx>,
    );
    expect(await screen.findByText("No text matches.")).toBeTruthy();
    rerender(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <ContentSearch query="水温" onOpen={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByText(/embedding model did not answer/)).toBeTruthy());
  });
});
