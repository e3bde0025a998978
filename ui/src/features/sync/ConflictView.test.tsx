import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { SyncConflict, SyncConflictView } from "../../shared/api/generated";
import { asSent } from "../../shared/testing/mergeRegions";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { ConflictView } from "./ConflictView";

afterEach(() => cleanup());

const base = "第一段。\n第二段，未保存的尾巴。\n第三段。\n第四段。\n第五段。\n第六段。\n第七段。\n第八段。\n第九段。\n第十段。\n";
// Bob changes lines 2 and 8 and, apart from everything, line 5; Alice changes lines 2
// and 8 differently and, apart, line 10.
const mine = "第一段。\n第二段，未保存的尾巴——我的版本。\n第三段。\n第四段。\n第五段（我改）。\n第六段。\n第七段。\n第八段甲。\n第九段。\n第十段。\n";
const theirs = "第一段。\n第二段，Alice 的版本。\n第三段。\n第四段。\n第五段。\n第六段。\n第七段。\n第八段乙。\n第九段。\n第十段（Alice 改）。\n";

let seq = 0;
function makeConflict(over: Partial<SyncConflict> = {}): SyncConflictView {
  seq += 1;
  return asSent({
    id: `cnf_${seq}`,
    projectId: "prj_1",
    kind: "push",
    state: "open",
    base: { title: "春天的信", source: base, author: "Alice", localNumber: 1, serverNumber: 1 },
    mine: { title: "春天的信", source: mine, author: "Bob", localNumber: 2 },
    theirs: { title: "春天的信", source: theirs, author: "Alice", localNumber: 3, serverNumber: 2 },
    // What the core reports: one overlap per edit of the person's that touches the server's.
    overlaps: [
      { baseStart: 1, baseLen: 1, mine: "第二段，未保存的尾巴——我的版本。\n", theirs: "第二段，Alice 的版本。\n" },
      { baseStart: 7, baseLen: 1, mine: "第八段甲。\n", theirs: "第八段乙。\n" },
    ],
    jobIds: ["job_1"],
    createdAt: "",
    updatedAt: "",
    ...over,
  });
}

function setup(conflict: SyncConflictView, lang: Lang = "en") {
  const transport = new FakeTransport().on("sync.resolve", () => ({ conflict: { ...conflict, state: "resolved", resolution: 4 }, version: { number: 4 } as never }));
  const onClose = vi.fn();
  const onResolved = vi.fn();
  const toasts: string[] = [];
  const view = (
    <WithCtx ctx={makeCtx(transport, lang, { toast: (t) => toasts.push(t) })}>
      <ConflictView conflict={conflict} onClose={onClose} onResolved={onResolved} />
    </WithCtx>
  );
  const r = render(view);
  return { transport, onClose, onResolved, toasts, rerender: () => r.rerender(view), unmount: r.unmount };
}

const result = () => (screen.getByTestId("conflict-result") as HTMLTextAreaElement).value;
const hunks = () => screen.getAllByTestId("conflict-hunk");
const choose = (hunk: HTMLElement, choice: "mine" | "theirs" | "both") => fireEvent.click(hunk.querySelector(`button[data-choice=${choice}]`)!);

describe("the sync conflict view", () => {
  it("lists each overlapping place, marks it in the text with both sides, and merges the rest visibly", () => {
    setup(makeConflict());
    // The places are counted with a proper plural and listed with where they are.
    const summary = screen.getByTestId("conflict-overlaps").textContent ?? "";
    expect(summary).toContain("in 2 places");
    expect(summary).not.toContain("(s)");
    const places = screen.getAllByTestId("conflict-place").map((p) => p.textContent);
    expect(places).toHaveLength(2);
    expect(places[0]).toContain("Line 2");
    expect(places[0]).toContain("未保存的尾巴");
    expect(places[1]).toContain("Line 8");
    // Each is marked in the merge, numbered, with the two sides next to each other and
    // the changed characters highlighted.
    const [first, second] = hunks();
    expect(first.dataset.place).toBe("1");
    expect(first.dataset.state).toBe("undecided");
    expect(within(first).getByTestId("conflict-hunk-mine").textContent).toBe("第二段，未保存的尾巴——我的版本。\n");
    expect(within(first).getByTestId("conflict-hunk-theirs").textContent).toBe("第二段，Alice 的版本。\n");
    expect(within(first).getByTestId("conflict-hunk-mine").querySelector("mark")?.textContent).toContain("我的版本");
    expect(within(second).getByTestId("conflict-hunk-theirs").textContent).toBe("第八段乙。\n");
    // The place list leads to the place.
    fireEvent.click(screen.getAllByTestId("conflict-place")[1]);
    expect(document.activeElement).toBe(second);
    // The edits apart are merged automatically, both in the merge and in the result.
    const auto = screen.getAllByTestId("conflict-auto-change");
    expect(auto.map((a) => a.dataset.side)).toEqual(["mine", "theirs"]);
    expect(screen.getByTestId("conflict-auto").textContent).toContain("2 changes");
    expect(result()).toContain("第五段（我改）。\n");
    expect(result()).toContain("第十段（Alice 改）。\n");
    // Undecided places hold the person's side for now, and the result cannot be used yet.
    expect(result()).toContain("第二段，未保存的尾巴——我的版本。\n");
    expect((screen.getByTestId("conflict-edited") as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId("conflict-undecided").textContent).toBe("Decide 2 more places first");
  });

  it("shows the base on request", () => {
    setup(makeConflict());
    expect(screen.queryByTestId("conflict-hunk-base")).toBeNull();
    const toggle = screen.getByTestId("conflict-show-base");
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-pressed")).toBe("true");
    const bases = screen.getAllByTestId("conflict-hunk-base").map((b) => b.textContent);
    expect(bases).toEqual(["第二段，未保存的尾巴。\n", "第八段。\n"]);
    // The base of an automatic merge is shown too.
    expect(screen.getAllByTestId("conflict-auto-change")[0].textContent).toContain("第五段。");
  });

  it("writes each place's choice (mine, theirs, both) into the result and resolves with exactly that text", async () => {
    const { transport, toasts, onResolved } = setup(makeConflict());
    const [first, second] = hunks();
    // The first undecided place has the focus; its keys choose.
    expect(document.activeElement).toBe(first);
    expect(first.tabIndex).toBe(0);
    expect(second.tabIndex).toBe(0);
    fireEvent.keyDown(first, { key: "2" });
    expect(first.dataset.state).toBe("theirs");
    choose(second, "both");
    const expected = "第一段。\n第二段，Alice 的版本。\n第三段。\n第四段。\n第五段（我改）。\n第六段。\n第七段。\n第八段甲。\n第八段乙。\n第九段。\n第十段（Alice 改）。\n";
    expect(result()).toBe(expected);
    // A place decided again replaces only its own text.
    choose(first, "mine");
    choose(first, "theirs");
    expect(result()).toBe(expected);
    expect(screen.queryByTestId("conflict-undecided")).toBeNull();
    // Enter on a place selects its text in the result, to edit it there.
    fireEvent.keyDown(second, { key: "Enter" });
    const box = screen.getByTestId("conflict-result") as HTMLTextAreaElement;
    expect(document.activeElement).toBe(box);
    expect(box.value.slice(box.selectionStart, box.selectionEnd)).toBe("第八段甲。\n第八段乙。\n");
    fireEvent.click(screen.getByTestId("conflict-edited"));
    await waitFor(() => expect(transport.callsTo("sync.resolve")).toEqual([{ conflictId: expect.stringMatching(/^cnf_/), choice: "edited", title: "春天的信", source: expected }]));
    await waitFor(() => expect(onResolved).toHaveBeenCalled());
    expect(toasts).toContain("Resolved as version 4");
  });

  it("sends what is typed in the result, keeping typed text when another place is chosen", async () => {
    const { transport } = setup(makeConflict());
    const [first, second] = hunks();
    choose(first, "mine");
    choose(second, "mine");
    // Typing inside the first place makes it the person's own text.
    const typed = result().replace("我的版本", "我们商量后的版本");
    fireEvent.change(screen.getByTestId("conflict-result"), { target: { value: typed } });
    expect(first.dataset.state).toBe("edited");
    // Choosing at the second place leaves the typed text alone.
    choose(second, "theirs");
    expect(result()).toContain("第二段，未保存的尾巴——我们商量后的版本。\n");
    expect(result()).toContain("第八段乙。\n");
    // A line added at the end and a new title.
    const final = `${result()}补记。\n`;
    fireEvent.change(screen.getByTestId("conflict-result"), { target: { value: final } });
    fireEvent.change(screen.getByTestId("conflict-title"), { target: { value: "春天的信（合）" } });
    fireEvent.click(screen.getByTestId("conflict-edited"));
    await waitFor(() => expect(transport.callsTo("sync.resolve")).toEqual([{ conflictId: expect.stringMatching(/^cnf_/), choice: "edited", title: "春天的信（合）", source: final }]));
  });

  it("resolves a clean merge with the edited text, never with a merge that ignores it", async () => {
    const cleanMine = "第一段（我改）。\n第二段。\n第三段。\n";
    const cleanTheirs = "第一段。\n第二段。\n第三段（Alice 改）。\n";
    const merged = "第一段（我改）。\n第二段。\n第三段（Alice 改）。\n";
    const conflict = makeConflict({
      base: { title: "信", source: "第一段。\n第二段。\n第三段。\n", author: "Alice" },
      mine: { title: "信", source: cleanMine, author: "Bob" },
      theirs: { title: "信", source: cleanTheirs, author: "Alice" },
      merged: { title: "信", source: merged },
      overlaps: [],
    });
    const { transport } = setup(conflict);
    expect(screen.getByTestId("conflict-clean")).toBeTruthy();
    expect(screen.queryByTestId("conflict-hunk")).toBeNull();
    expect(result()).toBe(merged);
    // No second button that would save the merge without what was typed.
    expect(screen.queryByTestId("conflict-merged")).toBeNull();
    const typed = merged.replace("第二段。", "第二段，补充。");
    fireEvent.change(screen.getByTestId("conflict-result"), { target: { value: typed } });
    fireEvent.click(screen.getByTestId("conflict-edited"));
    await waitFor(() => expect(transport.callsTo("sync.resolve")).toEqual([{ conflictId: conflict.id, choice: "edited", title: "信", source: typed }]));
  });

  it("lists a title both sides changed as a place of its own", async () => {
    const conflict = makeConflict({
      mine: { title: "春天的信（Bob）", source: mine, author: "Bob" },
      theirs: { title: "春天的信（Alice）", source: theirs, author: "Alice" },
    });
    const { transport } = setup(conflict);
    expect(screen.getByTestId("conflict-overlaps").textContent).toContain("in 3 places");
    const [title, first, second] = hunks();
    expect(title.textContent).toContain("Title");
    fireEvent.keyDown(title, { key: "2" });
    expect((screen.getByTestId("conflict-title") as HTMLInputElement).value).toBe("春天的信（Alice）");
    choose(first, "mine");
    choose(second, "theirs");
    fireEvent.click(screen.getByTestId("conflict-edited"));
    await waitFor(() => expect(transport.callsTo("sync.resolve")).toHaveLength(1));
    expect(transport.callsTo("sync.resolve")[0]).toMatchObject({ choice: "edited", title: "春天的信（Alice）" });
  });

  it("decide later and Esc send nothing, and the choices are still there when it opens again", () => {
    const conflict = makeConflict();
    const first = setup(conflict);
    choose(hunks()[0], "theirs");
    fireEvent.click(screen.getByTestId("conflict-later"));
    expect(first.onClose).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(screen.getByTestId("conflict-result"), { key: "Escape" });
    expect(first.onClose).toHaveBeenCalledTimes(2);
    expect(first.transport.callsTo("sync.resolve")).toEqual([]);
    first.unmount();
    setup(conflict);
    expect(hunks()[0].dataset.state).toBe("theirs");
    expect(result()).toContain("第二段，Alice 的版本。\n");
  });

  it("words everything in Chinese, with the count of places", () => {
    setup(makeConflict(), "zh");
    expect(screen.getByTestId("conflict-overlaps").textContent).toContain("双方在 2 处改动了相同的内容");
    expect(screen.getAllByTestId("conflict-place")[0].textContent).toContain("第 2 行");
    expect(screen.getByTestId("conflict-later").textContent).toBe("稍后决定");
    expect(screen.getByTestId("conflict-undecided").textContent).toBe("还有 2 处待决定");
    const dialog = screen.getByTestId("sync-conflict");
    // Only names, key names and the texts themselves are in Latin letters.
    const latin = (dialog.textContent ?? "").replace(/Alice|Tab|Enter|Esc/g, "").match(/[A-Za-z]{3,}/g);
    expect(latin).toBeNull();
  });
});
