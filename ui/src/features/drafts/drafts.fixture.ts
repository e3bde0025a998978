import type { Finding, PipelineCompileResult } from "../../shared/api/generated";

export const HTML = '<section style="font-size: 16px;"><p style="margin: 0;">春天 <strong>最佳</strong></p></section>';

export function finding(over: Partial<Finding>): Finding {
  return {
    check: "ad_law",
    severity: "warn",
    platform: null,
    span: null,
    location: null,
    matched: null,
    message: "msg",
    suggestion: null,
    route: null,
    ...over,
  };
}

export function compiled(revision: number, text = "春天最佳"): PipelineCompileResult {
  return {
    projectId: "p",
    revision,
    tags: ["春天", "写作"],
    findings: [
      finding({ check: "ad_law", matched: "最佳", span: { from: 2, to: 4 }, message: "“最佳” is an absolute term", suggestion: "Add scope and evidence" }),
      finding({ check: "ai_declaration", severity: "info", platform: "douyin", message: "declare AI" }),
    ],
    drafts: [
      {
        draft: { platform: "wechat", profileId: "wechat@draft-v1", title: "标题", content: { type: "html", html: HTML, digest: "d" }, nImages: 0, nLinks: 0 },
        findings: [],
      },
      {
        draft: { platform: "zhihu", profileId: "zhihu@draft-v1", title: "标题", content: { type: "markdown", markdown: `## 小节\n\n${text}` }, nImages: 0, nLinks: 0 },
        findings: [finding({ check: "limit.title", severity: "warn", platform: "zhihu", location: "title", message: "title too short" })],
      },
      {
        draft: {
          platform: "x",
          profileId: "x@draft-v1",
          title: "标题",
          content: {
            type: "thread",
            posts: [
              { text: `1/2 ${text}`, weightedLength: 12 },
              { text: "2/2 long", weightedLength: 300 },
            ],
          },
          nImages: 0,
          nLinks: 0,
        },
        findings: [finding({ check: "limit.post", severity: "block", platform: "x", location: "post 2", message: "over 280" })],
      },
      {
        draft: { platform: "douyin", profileId: "douyin@draft-v1", title: "抖音标题", content: { type: "card", body: `${text}\n\n#春天 #写作`, tags: ["春天", "写作"] }, nImages: 0, nLinks: 0 },
        findings: [],
      },
      {
        draft: { platform: "xiaohongshu", profileId: "xiaohongshu@draft-v1", title: "小红书标题", content: { type: "card", body: text, tags: ["春天"] }, nImages: 0, nLinks: 0 },
        findings: [],
      },
    ],
  };
}

