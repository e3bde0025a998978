import { describe, expect, it } from "vitest";
import { countText, createTextCounter } from "./wordcount";

describe("countText", () => {
  it("counts mostly Chinese text in characters, punctuation included, as WeChat and Xiaohongshu count 字", () => {
    expect(countText("")).toEqual({ n: 0, unit: "words" });
    expect(countText("春眠不觉晓")).toEqual({ n: 5, unit: "chars" });
    // 12 characters: ten Han and two full-width punctuation marks.
    expect(countText("春眠不觉晓，处处闻啼鸟。")).toEqual({ n: 12, unit: "chars" });
    // Latin letters in Chinese text are characters too (an XHS body counts them so).
    expect(countText("用 AI 写作")).toEqual({ n: 5, unit: "chars" });
    expect(countText("春眠 Hello, world! 不觉晓")).toEqual({ n: 17, unit: "chars" });
  });

  it("leaves Markdown out of the characters: headings, list and quote marks, emphasis, link targets", () => {
    expect(countText("# 标题\n\n- 列表，一\n> 引用\n1. 第一步")).toEqual({ n: 2 + 4 + 2 + 3, unit: "chars" });
    expect(countText("**重点**和`代码`")).toEqual({ n: 5, unit: "chars" });
    expect(countText("见[说明](https://example.com/guide)。\n\n![封面图](media/a.png)\n\n---")).toEqual({ n: 4, unit: "chars" });
  });

  it("counts English text in words", () => {
    expect(countText("Hello world")).toEqual({ n: 2, unit: "words" });
    expect(countText("don't stop-motion 2026")).toEqual({ n: 3, unit: "words" });
    expect(countText("# Writing short\n\nShort sentences are easier to read. 中文")).toEqual({ n: 10, unit: "words" });
  });
});

describe("createTextCounter", () => {
  it("gives the same totals as countText, repeated lines included", () => {
    const count = createTextCounter();
    for (const text of ["春眠 Hello\n春眠 Hello\n\nworld 晓", "Spring dawn\nSpring dawn\n春", ""]) {
      expect(count(text)).toEqual(countText(text));
      expect(count(`${text}x`)).toEqual(countText(`${text}x`));
    }
  });
});
