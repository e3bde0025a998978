import { describe, expect, it } from "vitest";
import { renderAssistantMarkdown, streamBlocks } from "./Markdown";

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

describe("images in assistant Markdown", () => {
  const dom = (text: string) => {
    const div = document.createElement("div");
    div.innerHTML = renderAssistantMarkdown(text);
    return div;
  };

  it("never renders an <img>: a remote image shows its address as a link instead", () => {
    const div = dom("看这里 ![x](https://evil.example/?q=secret) 完");
    expect(div.querySelector("img")).toBeNull();
    const link = div.querySelector<HTMLAnchorElement>(".md-image a");
    expect(link?.getAttribute("href")).toBe("https://evil.example/?q=secret");
    expect(link?.textContent).toBe("https://evil.example/?q=secret");
    expect(link?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(div.querySelector(".md-image")?.textContent).toContain("x");
  });

  it("shows other addresses as text, escaped, and cuts a long one", () => {
    for (const text of [
      "![a](data:image/png;base64,iVBORw0KGgo=)",
      '![<b>a</b>](http://evil.example/"onerror=alert(1))',
      `![p](https://evil.example/${"q".repeat(500)})`,
      "[![badge](https://evil.example/b.svg)](https://evil.example/)",
      "![ref][r]\n\n[r]: https://evil.example/r.png",
    ])
      expect(dom(text).querySelector("img"), text).toBeNull();
    expect(dom("![a](data:image/png;base64,iVBORw0KGgo=)").querySelector(".md-image code")?.textContent).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(dom('![<b>a</b>](http://x.example/a"b)').querySelector("b")).toBeNull();
    expect(dom(`![p](https://evil.example/${"q".repeat(500)})`).querySelector(".md-image a")?.textContent?.length).toBe(201);
  });
});
