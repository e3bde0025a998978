import { describe, expect, it } from "vitest";
import { composeTask, MAX_SELECTION_CHARS, parseTask } from "./scope";

describe("a task scoped to a selection", () => {
  it("round-trips the task and the selection, Chinese and newlines included", () => {
    const selection = { from: 12, to: 30, text: "第一段，\n需要更短。" };
    const message = composeTask("  把这段改短  ", selection);
    expect(message).toBe('把这段改短\n\n<selection from="12" to="30">\n第一段，\n需要更短。\n</selection>');
    expect(parseTask(message)).toEqual({ task: "把这段改短", selection });
  });

  it("sends the task alone without a selection, or with an empty one", () => {
    expect(composeTask("Tighten the intro", null)).toBe("Tighten the intro");
    expect(composeTask("Tighten the intro", { from: 5, to: 5, text: "" })).toBe("Tighten the intro");
    expect(parseTask("Tighten the intro")).toEqual({ task: "Tighten the intro", selection: null });
  });

  it("does not misread a task that only mentions a selection tag", () => {
    const task = 'Explain <selection from="1" to="2">\nx\n</selection> please';
    expect(parseTask(task)).toEqual({ task, selection: null });
  });

  it("cuts a very long selection to fit a message", () => {
    const message = composeTask("t", { from: 0, to: 20000, text: "字".repeat(20000) });
    expect(message.length).toBeLessThan(20000);
    expect(parseTask(message).selection?.text).toHaveLength(MAX_SELECTION_CHARS + 1);
  });
});
