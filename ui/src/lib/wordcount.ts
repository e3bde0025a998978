// Word count for mixed Chinese and Latin text: every CJK character counts as one word,
// and each run of Latin letters or digits (with inner apostrophes/hyphens) counts as one.

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

export function countWords(text: string): number {
  if (!text) return 0;
  let n = 0;
  const cjk = text.match(CJK);
  if (cjk) n += cjk.length;
  // Remove CJK characters so the word regex does not count them again.
  const rest = cjk ? text.replace(CJK, " ") : text;
  const words = rest.match(WORD);
  if (words) n += words.length;
  return n;
}

/**
 * A counter for a document that changes a little at a time: counts per line and
 * remembers each line's count, so recounting a 50,000-character text after a keystroke
 * only counts the edited line.
 */
export function createWordCounter(): (text: string) => number {
  let cache = new Map<string, number>();
  return (text: string) => {
    const next = new Map<string, number>();
    let total = 0;
    for (const line of text.split("\n")) {
      let n = next.get(line) ?? cache.get(line);
      if (n === undefined) n = countWords(line);
      next.set(line, n);
      total += n;
    }
    cache = next;
    return total;
  };
}
