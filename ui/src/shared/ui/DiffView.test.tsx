import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { TextDiffResult } from "../api/generated";
import { DiffView, pairLines } from "./DiffView";

const diff: TextDiffResult = {
  identical: false,
  nInsertions: 1,
  nDeletions: 1,
  hunks: [
    {
      oldStart: 1,
      oldLen: 2,
      newStart: 1,
      newLen: 2,
      lines: [
        { kind: "equal", oldLine: 1, newLine: 1, segments: [{ text: "标题", emphasized: false }] },
        {
          kind: "delete",
          oldLine: 2,
          newLine: null,
          segments: [
            { text: "春", emphasized: false },
            { text: "眠", emphasized: true },
          ],
        },
        {
          kind: "insert",
          oldLine: null,
          newLine: 2,
          segments: [
            { text: "春", emphasized: false },
            { text: "晓", emphasized: true },
          ],
        },
      ],
    },
  ],
};

afterEach(() => cleanup());

describe("DiffView", () => {
  it("renders inline lines with word-level emphasis", () => {
    render(<DiffView diff={diff} mode="inline" identicalLabel="same" />);
    const rows = screen.getByTestId("diff").querySelectorAll("tr.diff-line");
    expect(Array.from(rows, (r) => r.getAttribute("data-kind"))).toEqual(["equal", "delete", "insert"]);
    expect(Array.from(screen.getByTestId("diff").querySelectorAll("mark"), (m) => m.textContent)).toEqual(["眠", "晓"]);
  });

  it("pairs deletions with insertions side by side", () => {
    expect(pairLines(diff.hunks[0].lines).map((r) => [r.left?.kind ?? null, r.right?.kind ?? null])).toEqual([
      ["equal", "equal"],
      ["delete", "insert"],
    ]);
    render(<DiffView diff={diff} mode="split" identicalLabel="same" />);
    const cells = screen.getByTestId("diff").querySelectorAll("tr.diff-line")[1].querySelectorAll("td.diff-text");
    expect(Array.from(cells, (c) => c.textContent)).toEqual(["春眠", "春晓"]);
  });

  it("says when nothing changed", () => {
    render(<DiffView diff={{ identical: true, hunks: [], nInsertions: 0, nDeletions: 0 }} mode="split" identicalLabel="No differences." />);
    expect(screen.getByTestId("diff-identical").textContent).toBe("No differences.");
  });
});
