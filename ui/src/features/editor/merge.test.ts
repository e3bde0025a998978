import { describe, expect, it } from "vitest";
import { merge3 } from "./merge";

const doc = (title: string, source: string) => ({ title, source });

describe("merge3 (keeping both sides in the editor)", () => {
  const base = doc("春天的信", "# 春天的信\n\n第一段。\n\n第二段。\n");

  it("keeps a teammate's new paragraph and the person's edit elsewhere", () => {
    const mine = doc("春天的信", "# 春天的信\n\n第一段。乙\n\n第二段。\n");
    const theirs = doc("春天的信", "# 春天的信\n\n第一段。\n\n第二段。\n\n第四段：A 加的。\n");
    const r = merge3(base, mine, theirs);
    expect(r.source).toBe("# 春天的信\n\n第一段。乙\n\n第二段。\n\n第四段：A 加的。\n");
    expect(r.overlaps).toBe(0);
  });

  it("keeps both texts where both changed the same lines, the person's first", () => {
    const mine = doc("春天的信", "# 春天的信\n\n第一段。我的\n\n第二段。\n");
    const theirs = doc("春天的信", "# 春天的信\n\n第一段。他们的\n\n第二段。\n");
    const r = merge3(base, mine, theirs);
    expect(r.source).toBe("# 春天的信\n\n第一段。我的\n第一段。他们的\n\n第二段。\n");
    expect(r.overlaps).toBe(1);
    expect(r.source.slice(r.spans[0].from, r.spans[0].to)).toBe("第一段。我的\n第一段。他们的\n");
  });

  it("takes whichever side changed when only one did, and the title the same way", () => {
    expect(merge3(base, base, doc("新标题", "x\n"))).toEqual({ title: "新标题", source: "x\n", overlaps: 0, spans: [] });
    expect(merge3(base, doc("我的", "y\n"), base)).toEqual({ title: "我的", source: "y\n", overlaps: 0, spans: [] });
    expect(merge3(base, doc("我的", base.source), doc("他们的", base.source)).overlaps).toBe(1);
  });
});
