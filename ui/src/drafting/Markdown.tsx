// Assistant text as Markdown: markdown-it with raw HTML off (a model's answer cannot
// inject markup) and its link validation (no javascript: URLs).
import MarkdownIt from "markdown-it";
import { memo, useMemo } from "react";

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};

export function renderAssistantMarkdown(text: string): string {
  return md.render(text);
}

export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  const html = useMemo(() => renderAssistantMarkdown(text), [text]);
  return <div className={`md ${className ?? ""}`} dangerouslySetInnerHTML={{ __html: html }} />;
});
