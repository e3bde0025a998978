// Assistant text as Markdown: markdown-it with raw HTML off (a model's answer cannot
// inject markup) and its link validation (no javascript: URLs). Images are never
// loaded: `![alt](url)` shows its alt text and its address as text (a link for
// http(s)), since fetching an address the model wrote could carry workspace text to
// any server without anyone approving it.
import MarkdownIt from "markdown-it";
import { memo, useMemo } from "react";

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};
/** The longest address shown in full (a data: URL is cut). */
const SHOWN_URL_CHARS = 200;
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const src = String(token.attrGet("src") ?? "");
  const alt = self.renderInlineAsText(token.children ?? [], options, env);
  const esc = md.utils.escapeHtml;
  const shown = src.length > SHOWN_URL_CHARS ? `${src.slice(0, SHOWN_URL_CHARS)}…` : src;
  const address = /^https?:\/\//i.test(src)
    ? `<a href="${esc(src)}" target="_blank" rel="noopener noreferrer">${esc(shown)}</a>`
    : `<code>${esc(shown)}</code>`;
  return `<span class="md-image" data-testid="md-image">${alt ? `${esc(alt)} ` : ""}(${address})</span>`;
};

export function renderAssistantMarkdown(text: string): string {
  return md.render(text);
}

export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  const html = useMemo(() => renderAssistantMarkdown(text), [text]);
  return <div className={`md ${className ?? ""}`} dangerouslySetInnerHTML={{ __html: html }} />;
});

/** Splits streamed text into blocks at blank lines outside code fences: every block
 * but the last is complete and never changes again. */
export function streamBlocks(text: string): string[] {
  const blocks: string[] = [];
  let start = 0;
  let fences = 0;
  let at = 0;
  for (;;) {
    const next = text.indexOf("\n\n", at);
    if (next < 0) break;
    const piece = text.slice(at, next);
    fences += piece.split("```").length - 1;
    at = next + 2;
    if (fences % 2 === 0) {
      blocks.push(text.slice(start, next));
      start = at;
    }
  }
  blocks.push(text.slice(start));
  return blocks;
}

const Block = memo(function Block({ text }: { text: string }) {
  const html = useMemo(() => renderAssistantMarkdown(text), [text]);
  return <div className="md-block" dangerouslySetInnerHTML={{ __html: html }} />;
});

/** Text still streaming: only its last block is parsed and laid out again as it grows,
 * so a long answer costs the same per frame at its end as at its start. */
export const StreamingMarkdown = memo(function StreamingMarkdown({ text }: { text: string }) {
  const blocks = streamBlocks(text);
  return (
    <div className="md">
      {blocks.map((b, i) => (
        <Block key={i} text={b} />
      ))}
    </div>
  );
});
