// Renders the server's line hunks with word-level emphasis, inline or side by side.
import { memo } from "react";
import type { DiffLine, Hunk, Segment, TextDiffResult } from "../api/generated";

export type DiffMode = "inline" | "split";

function Segments({ segments }: { segments: Segment[] }) {
  return (
    <>
      {segments.map((s, i) =>
        s.emphasized ? (
          <mark key={i} className="diff-em">
            {s.text}
          </mark>
        ) : (
          <span key={i}>{s.text}</span>
        ),
      )}
    </>
  );
}

const sign = (k: DiffLine["kind"]) => (k === "insert" ? "+" : k === "delete" ? "−" : " ");

function InlineHunk({ hunk }: { hunk: Hunk }) {
  return (
    <tbody className="diff-hunk">
      <tr className="diff-hunk-head">
        <td colSpan={4}>
          @@ −{hunk.oldStart},{hunk.oldLen} +{hunk.newStart},{hunk.newLen} @@
        </td>
      </tr>
      {hunk.lines.map((l, i) => (
        <tr key={i} className={`diff-line diff-${l.kind}`} data-kind={l.kind}>
          <td className="diff-no">{l.oldLine ?? ""}</td>
          <td className="diff-no">{l.newLine ?? ""}</td>
          <td className="diff-sign" aria-hidden="true">
            {sign(l.kind)}
          </td>
          <td className="diff-text">
            <Segments segments={l.segments} />
          </td>
        </tr>
      ))}
    </tbody>
  );
}

type Row = { left: DiffLine | null; right: DiffLine | null };

/** Pairs runs of deletions with the insertions that follow them. */
export function pairLines(lines: DiffLine[]): Row[] {
  const rows: Row[] = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i];
    if (l.kind === "equal") {
      rows.push({ left: l, right: l });
      i++;
      continue;
    }
    const dels: DiffLine[] = [];
    const ins: DiffLine[] = [];
    while (i < lines.length && lines[i].kind === "delete") dels.push(lines[i++]);
    while (i < lines.length && lines[i].kind === "insert") ins.push(lines[i++]);
    for (let k = 0; k < Math.max(dels.length, ins.length); k++) rows.push({ left: dels[k] ?? null, right: ins[k] ?? null });
  }
  return rows;
}

function SplitHunk({ hunk }: { hunk: Hunk }) {
  return (
    <tbody className="diff-hunk">
      <tr className="diff-hunk-head">
        <td colSpan={4}>
          @@ −{hunk.oldStart},{hunk.oldLen} +{hunk.newStart},{hunk.newLen} @@
        </td>
      </tr>
      {pairLines(hunk.lines).map((r, i) => (
        <tr key={i} className="diff-line">
          <td className="diff-no">{r.left?.oldLine ?? ""}</td>
          <td className={`diff-text diff-${r.left ? r.left.kind : "empty"}`} data-kind={r.left?.kind ?? "empty"}>
            {r.left && <Segments segments={r.left.segments} />}
          </td>
          <td className="diff-no">{r.right?.newLine ?? ""}</td>
          <td className={`diff-text diff-${r.right ? r.right.kind : "empty"}`} data-kind={r.right?.kind ?? "empty"}>
            {r.right && <Segments segments={r.right.segments} />}
          </td>
        </tr>
      ))}
    </tbody>
  );
}

export const DiffView = memo(function DiffView({
  diff,
  mode,
  identicalLabel,
}: {
  diff: TextDiffResult;
  mode: DiffMode;
  identicalLabel: string;
}) {
  if (diff.identical || diff.hunks.length === 0) {
    return (
      <p className="muted pad" data-testid="diff-identical">
        {identicalLabel}
      </p>
    );
  }
  return (
    <table className={`diff diff-${mode}`} data-testid="diff" data-mode={mode}>
      {/* The table's layout is fixed, so the columns are sized here (its first row, a
          hunk header, spans them all). */}
      {mode === "split" ? (
        <colgroup>
          <col className="diff-no-col" />
          <col />
          <col className="diff-no-col" />
          <col />
        </colgroup>
      ) : (
        <colgroup>
          <col className="diff-no-col" />
          <col className="diff-no-col" />
          <col className="diff-sign-col" />
          <col />
        </colgroup>
      )}
      {diff.hunks.map((h, i) => (mode === "inline" ? <InlineHunk key={i} hunk={h} /> : <SplitHunk key={i} hunk={h} />))}
    </table>
  );
});
