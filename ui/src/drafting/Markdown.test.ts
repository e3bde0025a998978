import { describe, expect, it } from "vitest";
import { streamBlocks } from "./Markdown";

describe("streamed Markdown", () => {
  it("splits at blank lines, keeping a code fence with its blank lines whole", () => {
    expect(streamBlocks("第一段。\n\n第二段，\n还在写")).toEqual(["第一段。", "第二段，\n还在写"]);
    expect(streamBlocks("看代码：\n\n```\na\n\nb\n```\n\n完")).toEqual(["看代码：", "```\na\n\nb\n```", "完"]);
    expect(streamBlocks("```\n未闭合\n\n还在围栏里")).toEqual(["```\n未闭合\n\n还在围栏里"]);
    expect(streamBlocks("")).toEqual([""]);
  });

  it("never changes a block once the text has moved past it", () => {
    const text = "一。\n\n二。\n\n三，写到一半";
    const before = streamBlocks(text);
    const after = streamBlocks(`${text}，写完了。\n\n四`);
    expect(after.slice(0, before.length - 1)).toEqual(before.slice(0, -1));
  });
});
