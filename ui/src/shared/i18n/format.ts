// The message syntax of the catalogs (messages/<lang>/*.json): the subset of ICU
// MessageFormat they use, which the core's formatter (crate inkstone-messages) reads the
// same way.
//
//   {name}                                   the value `name`
//   {n, plural, =0 {…} one {…} other {…}}    a branch by the language's plural rules
//                                            (Intl.PluralRules); `#` in it is the count
//
// Anything else is text. A value that is not given stays as its `{name}`, and a plural
// whose count is absent or not a number takes its `other` branch, so a wording never
// fails to render. A full ICU library (intl-messageformat) would cost more bundle than
// this whole file for features the catalogs do not use (select, number skeletons).

type Part = string | { arg: string } | { count: string; branches: Map<string, Part[]> } | { hash: true };

const cache = new Map<string, Part[]>();

const ARG = /\{\s*(\w+)\s*(\}|,\s*plural\s*,)/y;
const SELECTOR = /\s*(=\d+|zero|one|two|few|many|other)\s*\{/y;

/** Parses `src` from `at` up to an unmatched `}` or the end; returns the parts and where
 * it stopped. */
function parse(src: string, at: number, inPlural: boolean): [Part[], number] {
  const parts: Part[] = [];
  let text = "";
  let i = at;
  const flush = () => {
    if (text) parts.push(text);
    text = "";
  };
  while (i < src.length) {
    const c = src[i];
    if (c === "}") break;
    if (c === "#" && inPlural) {
      flush();
      parts.push({ hash: true });
      i++;
      continue;
    }
    if (c === "{") {
      ARG.lastIndex = i;
      const m = ARG.exec(src);
      if (m) {
        const name = m[1] ?? "";
        if (m[2] === "}") {
          flush();
          parts.push({ arg: name });
          i = ARG.lastIndex;
          continue;
        }
        const plural = parsePlural(src, ARG.lastIndex);
        if (plural) {
          flush();
          parts.push({ count: name, branches: plural[0] });
          i = plural[1];
          continue;
        }
      }
    }
    text += c;
    i++;
  }
  flush();
  return [parts, i];
}

/** The branches of a plural from just after its `plural,`, and the index after its `}`;
 * null when it is not one (then its text is shown as it is). */
function parsePlural(src: string, at: number): [Map<string, Part[]>, number] | null {
  const branches = new Map<string, Part[]>();
  let i = at;
  for (;;) {
    while (i < src.length && /\s/.test(src[i] ?? "")) i++;
    if (src[i] === "}") return branches.has("other") ? [branches, i + 1] : null;
    SELECTOR.lastIndex = i;
    const m = SELECTOR.exec(src);
    if (!m) return null;
    const [parts, end] = parse(src, SELECTOR.lastIndex, true);
    if (src[end] !== "}") return null;
    branches.set(m[1] ?? "", parts);
    i = end + 1;
  }
}

function partsOf(template: string): Part[] {
  let parts = cache.get(template);
  if (!parts) {
    const [parsed, end] = parse(template, 0, false);
    // A stray `}` is text: parse the rest after it.
    parts = end < template.length ? [...parsed, "}", ...partsOf(template.slice(end + 1))] : parsed;
    cache.set(template, parts);
  }
  return parts;
}

/** The count a value names: a number, or text such as "3" (the core's wordings carry
 * their values as text). */
export function countOf(value: string | number | undefined): number | null {
  if (typeof value === "number") return value;
  return typeof value === "string" && /^\d+$/.test(value) ? Number(value) : null;
}

function render(parts: Part[], vars: Record<string, string | number>, rules: Intl.PluralRules, hash: string): string {
  let out = "";
  for (const part of parts) {
    if (typeof part === "string") out += part;
    else if ("hash" in part) out += hash;
    else if ("arg" in part) out += part.arg in vars ? String(vars[part.arg]) : `{${part.arg}}`;
    else {
      const value = vars[part.count];
      const count = countOf(value);
      const branch =
        (count !== null && (part.branches.get(`=${count}`) ?? part.branches.get(rules.select(count)))) || part.branches.get("other") || [];
      out += render(branch, vars, rules, value === undefined ? `{${part.count}}` : String(value));
    }
  }
  return out;
}

/** `template` with its values filled and its plurals chosen by `rules`. */
export function formatMessage(template: string, vars: Record<string, string | number>, rules: Intl.PluralRules): string {
  return render(partsOf(template), vars, rules, "#");
}
