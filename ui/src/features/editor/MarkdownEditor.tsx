// CodeMirror 6 Markdown source editor. Uncontrolled: React never re-renders it while
// typing; the parent reads the text through the handle and hears about changes.

import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { defaultHighlightStyle, defineLanguageFacet, HighlightStyle, Language, syntaxHighlighting } from "@codemirror/language";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { Annotation, Compartment, EditorState, type Extension, RangeSet, StateEffect, StateField } from "@codemirror/state";
import {
  Decoration,
  type DecorationSet,
  drawSelection,
  EditorView,
  keymap,
  placeholder as cmPlaceholder,
} from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { GFM, parser as markdownParser } from "@lezer/markdown";
import { forwardRef, useEffect, useImperativeHandle, useRef } from "react";

export interface AnchorMark {
  id: string;
  from: number;
  to: number;
}

export interface EditorHandle {
  getText(): string;
  /** Replaces the whole text without reporting it as a local edit. */
  setText(text: string): void;
  getSelection(): { from: number; to: number };
  select(from: number, to: number): void;
  insert(text: string, at?: number): void;
  focus(): void;
  isComposing(): boolean;
  /** Current (mapped through edits) positions of anchor marks. */
  anchors(): AnchorMark[];
  view(): EditorView | null;
}

export interface MarkdownEditorProps {
  /** Changing it replaces the document (another project). */
  docKey: string;
  initialText: string;
  placeholder?: string;
  ariaLabel: string;
  anchors: AnchorMark[];
  onChange: (getText: () => string) => void;
  onImageFiles?: (files: File[], pos: number) => void;
  /** The selected text changed (empty when the selection is a cursor). */
  onSelectionText?: (text: string) => void;
  /** Asked once the editor for a document is ready: true puts the cursor in it. */
  focusWhenReady?: () => boolean;
}

// Markdown (CommonMark + GFM) straight from the Lezer parser: the same highlighting as
// @codemirror/lang-markdown without the HTML, CSS and JavaScript languages it bundles.
const markdownLanguage = new Language(defineLanguageFacet({ commentTokens: {} }), markdownParser.configure([GFM]), [], "markdown");

/** Marks an externally applied change, which is not a local edit. */
const external = Annotation.define<boolean>();

const setAnchors = StateEffect.define<AnchorMark[]>();
const anchorMark = (id: string) => Decoration.mark({ class: "cm-comment-anchor", attributes: { "data-comment": id } });

const anchorField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setAnchors)) continue;
      // Keep positions already mapped through local edits; add new ones as given.
      const known = new Map<string, { from: number; to: number }>();
      deco.between(0, tr.state.doc.length, (from, to, v) => {
        const id = (v.spec.attributes as Record<string, string> | undefined)?.["data-comment"];
        if (id) known.set(id, { from, to });
      });
      const len = tr.state.doc.length;
      const ranges = e.value
        .map((a) => known.get(a.id) ?? { from: Math.min(a.from, len), to: Math.min(a.to, len) })
        .map((r, i) => ({ ...r, id: e.value[i].id }))
        .filter((r) => r.to > r.from)
        .sort((a, b) => a.from - b.from || a.to - b.to);
      deco = RangeSet.of(ranges.map((r) => anchorMark(r.id).range(r.from, r.to)));
    }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

const markdownHighlight = HighlightStyle.define([
  { tag: tags.heading1, fontSize: "1.4em", fontWeight: "600" },
  { tag: tags.heading2, fontSize: "1.2em", fontWeight: "600" },
  { tag: [tags.heading3, tags.heading4, tags.heading5, tags.heading6], fontWeight: "600" },
  { tag: tags.strong, fontWeight: "600" },
  { tag: tags.emphasis, fontStyle: "italic" },
  { tag: tags.strikethrough, textDecoration: "line-through" },
  { tag: [tags.link, tags.url], color: "var(--accent)" },
  { tag: tags.monospace, fontFamily: "var(--mono)" },
  { tag: [tags.processingInstruction, tags.meta, tags.quote], color: "var(--fg-muted)" },
]);

const theme = EditorView.theme({
  "&": { height: "100%", backgroundColor: "transparent", color: "var(--fg)" },
  ".cm-scroller": { fontFamily: "var(--font)", lineHeight: "1.8", fontSize: "16px" },
  ".cm-content": { padding: "8px 0 160px", caretColor: "var(--fg)", maxWidth: "760px" },
  ".cm-line": { padding: "0" },
  "&.cm-focused": { outline: "none" },
  ".cm-cursor": { borderLeftColor: "var(--fg)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "var(--selection) !important",
  },
  ".cm-placeholder": { color: "var(--fg-muted)" },
});

/** The editor's words (its placeholder and its name for screen readers), in the UI's
 * language. They live in a compartment each, reconfigured when the language changes (or a
 * catalog arrives): the editor itself is not rebuilt, so the text, the cursor and the undo
 * history stay. (A compartment is only a key: every editor's state holds its own.) */
const placeholderSlot = new Compartment();
const labelSlot = new Compartment();

function wording(placeholder: string | undefined, ariaLabel: string): { placeholder: Extension; label: Extension } {
  return {
    placeholder: placeholder ? cmPlaceholder(placeholder) : [],
    label: EditorView.contentAttributes.of({ "aria-label": ariaLabel }),
  };
}

export const MarkdownEditor = forwardRef<EditorHandle, MarkdownEditorProps>(function MarkdownEditor(props, ref) {
  const host = useRef<HTMLDivElement>(null);
  const viewRef = useRef<EditorView | null>(null);
  const propsRef = useRef(props);
  propsRef.current = props;

  useEffect(() => {
    if (!host.current) return;
    const words = wording(propsRef.current.placeholder, propsRef.current.ariaLabel);
    const extensions: Extension[] = [
      history(),
      drawSelection(),
      EditorView.lineWrapping,
      markdownLanguage,
      syntaxHighlighting(markdownHighlight),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      highlightSelectionMatches(),
      keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab]),
      anchorField,
      theme,
      labelSlot.of(words.label),
      placeholderSlot.of(words.placeholder),
      EditorView.contentAttributes.of({
        "aria-multiline": "true",
        "data-testid": "editor-content",
        spellcheck: "false",
      }),
      EditorView.updateListener.of((u) => {
        if (u.selectionSet || u.docChanged) {
          const r = u.state.selection.main;
          propsRef.current.onSelectionText?.(r.empty ? "" : u.state.sliceDoc(r.from, Math.min(r.to, r.from + 200)));
        }
        if (!u.docChanged) return;
        if (u.transactions.every((tr) => tr.annotation(external))) return;
        propsRef.current.onChange(() => u.view.state.doc.toString());
      }),
      EditorView.domEventHandlers({
        paste(event, view) {
          const files = imageFiles(event.clipboardData);
          if (!files.length || !propsRef.current.onImageFiles) return false;
          event.preventDefault();
          propsRef.current.onImageFiles(files, view.state.selection.main.head);
          return true;
        },
        drop(event, view) {
          const files = imageFiles(event.dataTransfer);
          if (!files.length || !propsRef.current.onImageFiles) return false;
          event.preventDefault();
          const pos = view.posAtCoords({ x: event.clientX, y: event.clientY }) ?? view.state.selection.main.head;
          propsRef.current.onImageFiles(files, pos);
          return true;
        },
      }),
    ];
    const view = new EditorView({
      state: EditorState.create({ doc: propsRef.current.initialText, extensions }),
      parent: host.current,
    });
    viewRef.current = view;
    view.dispatch({ effects: setAnchors.of(propsRef.current.anchors) });
    if (propsRef.current.focusWhenReady?.()) view.focus();
    return () => {
      // The destroyed view is kept: its last text stays readable for a final save.
      view.destroy();
    };
    // A new document key means a new editor state.
  }, [props.docKey]);

  useEffect(() => {
    const view = viewRef.current;
    if (!view) return;
    const words = wording(props.placeholder, props.ariaLabel);
    view.dispatch({ effects: [placeholderSlot.reconfigure(words.placeholder), labelSlot.reconfigure(words.label)] });
  }, [props.placeholder, props.ariaLabel]);

  useEffect(() => {
    viewRef.current?.dispatch({ effects: setAnchors.of(props.anchors) });
  }, [props.anchors]);

  useImperativeHandle(
    ref,
    () => ({
      getText: () => viewRef.current?.state.doc.toString() ?? "",
      setText(text) {
        const v = viewRef.current;
        if (!v) return;
        // Only the part that differs is replaced, so the cursor, the selection and the
        // comment marks outside it stay where they were (a teammate's paragraph synced
        // in below does not move the person's cursor).
        const old = v.state.doc.toString();
        if (old === text) return;
        let from = 0;
        const max = Math.min(old.length, text.length);
        while (from < max && old.charCodeAt(from) === text.charCodeAt(from)) from++;
        let tail = 0;
        while (tail < max - from && old.charCodeAt(old.length - 1 - tail) === text.charCodeAt(text.length - 1 - tail)) tail++;
        // Never split a surrogate pair.
        if (from > 0 && isHighSurrogate(old.charCodeAt(from - 1))) from--;
        if (tail > 0 && isLowSurrogate(old.charCodeAt(old.length - tail))) tail--;
        v.dispatch({ changes: { from, to: old.length - tail, insert: text.slice(from, text.length - tail) }, annotations: external.of(true) });
      },
      getSelection() {
        const r = viewRef.current?.state.selection.main;
        return { from: r?.from ?? 0, to: r?.to ?? 0 };
      },
      select(from, to) {
        const v = viewRef.current;
        if (!v) return;
        const len = v.state.doc.length;
        v.dispatch({ selection: { anchor: Math.min(from, len), head: Math.min(to, len) }, scrollIntoView: true });
        v.focus();
      },
      insert(text, at) {
        const v = viewRef.current;
        if (!v) return;
        const pos = Math.min(at ?? v.state.selection.main.head, v.state.doc.length);
        v.dispatch({ changes: { from: pos, insert: text }, selection: { anchor: pos + text.length } });
      },
      focus: () => viewRef.current?.focus(),
      isComposing: () => Boolean(viewRef.current?.composing || viewRef.current?.compositionStarted),
      anchors() {
        const v = viewRef.current;
        if (!v) return [];
        const out: AnchorMark[] = [];
        v.state.field(anchorField).between(0, v.state.doc.length, (from, to, d) => {
          const id = (d.spec.attributes as Record<string, string> | undefined)?.["data-comment"];
          if (id) out.push({ id, from, to });
        });
        return out;
      },
      view: () => viewRef.current,
    }),
    [],
  );

  return <div className="editor-host" ref={host} data-testid="editor" />;
});

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

function imageFiles(data: DataTransfer | null): File[] {
  if (!data) return [];
  const out: File[] = [];
  for (const f of Array.from(data.files ?? [])) if (f.type.startsWith("image/")) out.push(f);
  if (out.length === 0) {
    for (const item of Array.from(data.items ?? [])) {
      if (item.kind === "file" && item.type.startsWith("image/")) {
        const f = item.getAsFile();
        if (f) out.push(f);
      }
    }
  }
  return out;
}
