// Prints every emoji sequence twitter-text counts as one emoji (weight 2), in the
// order its matcher tries them, one per line. Its output is
// src-tauri/core/src/pipeline/measure/x_emoji.txt:
//   node tests/conformance/twemoji-sequences.mjs > src-tauri/core/src/pipeline/measure/x_emoji.txt
//
// twitter-text's parseTweet weighs each match of twemoji-parser's regex (a global
// regex over UTF-16 code units) as one emoji. That regex has no repetition, only
// alternation, optional parts and a `(?!\ufe0e)` look-ahead at the end of some
// alternatives, so the language it matches is finite. This script parses the regex's
// source and lists the strings in the order a backtracking matcher tries them (left
// alternative first, an optional part taken before it is skipped), so the first line
// that matches at a position is the regex's match there. A line is the code points in
// hex; a trailing `!fe0e` means "and the next character is not U+FE0E".
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../ui/package.json', import.meta.url));
const version = require('twemoji-parser/package.json').version;
const twitterVersion = require('twitter-text/package.json').version;
const regex = require('twemoji-parser/dist/lib/regex.js').default;
const source = regex.source;
if (regex.flags !== 'g') throw new Error(`unexpected flags: ${regex.flags}`);

let at = 0;
const fail = (what) => {
  throw new Error(`${what} at ${at}: ${source.slice(at, at + 40)}`);
};

// A parsed regex is a list of alternatives; an alternative is a list of terms; a term
// is { units: [code unit, ...] } (a class or literal: one of them), { group }, or
// { lookaheadNot: [code unit] }, each possibly { optional: true }.
function escapeUnit(inClass = false) {
  if (source[at] !== '\\') {
    const unit = source.charCodeAt(at);
    if ((inClass ? '[]\\^-' : '()[]|?*+.{}^$').includes(source[at])) fail('regex syntax');
    at += 1;
    return unit;
  }
  const m = /^\\u([0-9a-fA-F]{4})/.exec(source.slice(at));
  if (!m) fail('unsupported escape');
  at += 6;
  return parseInt(m[1], 16);
}

function charClass() {
  at += 1; // [
  if (source[at] === '^') fail('negated class');
  const units = [];
  while (source[at] !== ']') {
    const first = escapeUnit(true);
    if (source[at] === '-' && source[at + 1] !== ']') {
      at += 1;
      const last = escapeUnit(true);
      for (let u = first; u <= last; u++) units.push(u);
    } else {
      units.push(first);
    }
  }
  at += 1; // ]
  return units;
}

function alternation() {
  const alternatives = [[]];
  while (at < source.length && source[at] !== ')') {
    if (source[at] === '|') {
      at += 1;
      alternatives.push([]);
      continue;
    }
    let term;
    if (source.startsWith('(?!', at)) {
      at += 3;
      const units = [escapeUnit()];
      if (source[at] !== ')') fail('long look-ahead');
      at += 1;
      term = { lookaheadNot: units };
    } else if (source[at] === '(') {
      at += source.startsWith('(?:', at) ? 3 : 1;
      if (source[at] === '?') fail('unsupported group');
      term = { group: alternation() };
      if (source[at] !== ')') fail('unclosed group');
      at += 1;
    } else if (source[at] === '[') {
      term = { units: charClass() };
    } else {
      term = { units: [escapeUnit()] };
    }
    if (source[at] === '?') {
      at += 1;
      term.optional = true;
    }
    if ('*+{'.includes(source[at])) fail('repetition');
    alternatives[alternatives.length - 1].push(term);
  }
  return alternatives;
}

// Strings as { units, notBefore }, in the order a backtracking matcher tries them.
function expandAlternatives(alternatives) {
  return alternatives.flatMap((terms) => expandTerms(terms, 0));
}

function expandTerms(terms, idx) {
  if (idx === terms.length) return [{ units: [], notBefore: null }];
  const term = terms[idx];
  let heads;
  if (term.lookaheadNot) {
    heads = [{ units: [], notBefore: term.lookaheadNot[0] }];
  } else if (term.group) {
    heads = expandAlternatives(term.group);
  } else {
    heads = term.units.map((u) => ({ units: [u], notBefore: null }));
  }
  if (term.optional) heads = [...heads, { units: [], notBefore: null }];
  const tails = expandTerms(terms, idx + 1);
  const out = [];
  for (const head of heads) {
    for (const tail of tails) {
      // A look-ahead followed by text holds when that text does not start with the
      // excluded unit, and then says nothing more; at the end it stays a condition.
      if (head.notBefore !== null && tail.units.length > 0) {
        if (tail.units[0] !== head.notBefore) out.push({ units: head.units.concat(tail.units), notBefore: tail.notBefore });
        continue;
      }
      if (head.notBefore !== null && tail.notBefore !== null && head.notBefore !== tail.notBefore) fail('two look-aheads');
      out.push({ units: head.units.concat(tail.units), notBefore: tail.notBefore ?? head.notBefore });
    }
  }
  return out;
}

const parsed = alternation();
if (at !== source.length) fail('trailing text');

const sequences = expandAlternatives(parsed);

// Check the reading against the regex itself: on each sequence (followed by a
// character that fails every look-ahead, and by one that passes them), the regex
// matches at the start exactly the first listed sequence that fits there.
const firstFit = (text) =>
  sequences.find(({ units, notBefore }) => {
    const candidate = String.fromCharCode(...units);
    return text.startsWith(candidate) && (notBefore === null || text.charCodeAt(candidate.length) !== notBefore);
  });
for (const { units } of sequences) {
  for (const after of ['\ufe0e', 'x']) {
    const text = String.fromCharCode(...units) + after;
    regex.lastIndex = 0;
    const match = regex.exec(text);
    const fit = firstFit(text);
    const expected = fit ? String.fromCharCode(...fit.units) : null;
    if (!match || match.index !== 0 ? expected !== null : match[0] !== expected) {
      throw new Error(`the listing disagrees with the regex on ${JSON.stringify(text)}`);
    }
  }
}

const lines = [
  `# Emoji sequences of twemoji-parser ${version} (npm; the regex twitter-text ${twitterVersion}`,
  '# weighs as one emoji), in the order the regex tries them. Generated by',
  '# tests/conformance/twemoji-sequences.mjs: code points in hex; `!fe0e` = not before U+FE0E.',
];
for (const { units, notBefore } of sequences) {
  const text = String.fromCharCode(...units);
  if (!text.isWellFormed()) throw new Error(`lone surrogate in ${units.map((u) => u.toString(16))}`);
  if (text.length === 0) throw new Error('empty alternative');
  const codePoints = [...text].map((c) => c.codePointAt(0).toString(16));
  lines.push(codePoints.join(' ') + (notBefore === null ? '' : ` !${notBefore.toString(16)}`));
}
process.stdout.write(lines.join('\n') + '\n');
