// The length of a text in the status bar: one count, named for what it counts. Chinese
// (and Japanese, Korean) text is counted in characters, as WeChat and Xiaohongshu count
// 字: every character a reader sees, punctuation included, white space and Markdown
// markup not. Other text is counted in words: each run of letters or digits (with inner
// apostrophes or hyphens). Which of the two a text gets depends on what it is mostly
// written in: more CJK characters than other words means characters.

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;
// Markdown a reader does not see: a line's block markers, an image (it is a picture,
// not text), a link's target, emphasis and code marks, a table's pipes.
const BLOCK_MARK = /^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,9}[.)]\s+)+/u;
const IMAGE = /!\[[^\]]*\]\([^)]*\)/gu;
const LINK_TARGET = /\[([^\]]*)\]\([^)]*\)/gu;
const INLINE_MARK = /[*_~`|]/gu;
const SPACE = /\s/gu;

export type CountUnit = "chars" | "words";

export interface TextCount {
  n: number;
  unit: CountUnit;
}

interface LineCount {
  cjk: number;
  /** Visible characters but white space. */
  chars: number;
  /** Words of other scripts (CJK characters not included). */
  words: number;
}

function countLine(raw: string): LineCount {
  if (!raw.trim()) return { cjk: 0, chars: 0, words: 0 };
  const line = raw.replace(IMAGE, " ").replace(LINK_TARGET, "$1");
  const cjk = line.match(CJK)?.length ?? 0;
  const words = (cjk ? line.replace(CJK, " ") : line).match(WORD)?.length ?? 0;
  const visible = line.replace(BLOCK_MARK, "").replace(INLINE_MARK, "").replace(SPACE, "");
  // A thematic break (---, ***) shows no characters.
  const chars = /^[-=]+$/u.test(visible) ? 0 : [...visible].length;
  return { cjk, chars, words };
}

function total(lines: Iterable<LineCount>): TextCount {
  let cjk = 0;
  let chars = 0;
  let words = 0;
  for (const l of lines) {
    cjk += l.cjk;
    chars += l.chars;
    words += l.words;
  }
  return cjk > words ? { n: chars, unit: "chars" } : { n: cjk + words, unit: "words" };
}

/** The text's length: characters for mostly CJK text, words otherwise. */
export function countText(text: string): TextCount {
  return total(text.split("\n").map(countLine));
}

/**
 * A counter for a document that changes a little at a time: counts per line and
 * remembers each line's count, so recounting a 50,000-character text after a keystroke
 * only counts the edited line.
 */
export function createTextCounter(): (text: string) => TextCount {
  let cache = new Map<string, LineCount>();
  return (text: string) => {
    const next = new Map<string, LineCount>();
    const counts: LineCount[] = [];
    for (const line of text.split("\n")) {
      let c = next.get(line) ?? cache.get(line);
      if (c === undefined) c = countLine(line);
      next.set(line, c);
      counts.push(c);
    }
    cache = next;
    return total(counts);
  };
}
