import { describe, expect, it } from "vitest";
import { parseTask } from "./scope";

// Messages logged before `session.submit` had a typed selection carry it as a block.
describe("a task of an older session scoped to a selection", () => {
  it("splits the task and the selection, Chinese and newlines included", () => {
    const message = '把这段改短\n\n<selection from="12" to="30">\n第一段，\n需要更短。\n</selection>';
    expect(parseTask(message)).toEqual({ task: "把这段改短", selection: { from: 12, to: 30, text: "第一段，\n需要更短。" } });
  });

  it("leaves a task without a block alone", () => {
    expect(parseTask("Tighten the intro")).toEqual({ task: "Tighten the intro", selection: null });
  });

  it("does not misread a task that only mentions a selection tag", () => {
    const task = 'Explain <selection from="1" to="2">\nx\n</selection> please';
    expect(parseTask(task)).toEqual({ task, selection: null });
  });
});
