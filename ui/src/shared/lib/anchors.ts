// Finds where a comment's anchor is in the current text. The stored anchor is where the
// text was when the comment was made; when the text around it changed since, the quote
// is looked up again, nearest to the old place. Null when the quote is gone.

export function locateAnchor(
  text: string,
  anchor: { from: number; to: number },
  quote: string | null,
): { from: number; to: number } | null {
  if (anchor.to <= anchor.from) return null;
  if (!quote) return anchor.to <= text.length ? anchor : null;
  if (text.slice(anchor.from, anchor.to) === quote) return anchor;
  let best = -1;
  for (let i = text.indexOf(quote); i !== -1; i = text.indexOf(quote, i + 1)) {
    if (best === -1 || Math.abs(i - anchor.from) < Math.abs(best - anchor.from)) best = i;
  }
  return best === -1 ? null : { from: best, to: best + quote.length };
}
