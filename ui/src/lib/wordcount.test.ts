import { describe, expect, it } from "vitest";
import { countWords, createWordCounter } from "./wordcount";

describe("countWords", () => {
  it("counts each CJK character and each Latin word once", () => {
    expect(countWords("")).toBe(0);
    expect(countWords("Hello world")).toBe(2);
    expect(countWords("春眠不觉晓")).toBe(5);
    expect(countWords("春眠 Hello, world! 不觉晓")).toBe(7);
    expect(countWords("用 AI 写作")).toBe(4);
    expect(countWords("don't stop-motion 2026")).toBe(3);
    expect(countWords("# 标题\n\n- 列表，一")).toBe(5);
  });
});

describe("createWordCounter", () => {
  it("gives the same totals as countWords, repeated lines included", () => {
    const count = createWordCounter();
    const text = "春眠 Hello\n春眠 Hello\n\nworld 晓";
    expect(count(text)).toBe(countWords(text));
    expect(count(`${text}x`)).toBe(countWords(`${text}x`));
    expect(count("")).toBe(0);
  });
});
