// A task scoped to a selection of the source. The selection travels inside the user
// message, after the task, as one tagged block the model reads and the timeline turns
// back into a chip:
//
//   <task>
//
//   <selection from="120" to="164">
//   <the selected text>
//   </selection>
//
// `from`/`to` are UTF-16 offsets into the working copy (what CodeMirror counts, like
// every span in Inkstone). The block is the last thing in the message, so a task that
// itself mentions "<selection" is never misread.

export interface Selection {
  from: number;
  to: number;
  text: string;
}

/** The longest selection sent with a task; a message holds at most 20,000 characters. */
export const MAX_SELECTION_CHARS = 8000;

const BLOCK = /\n\n<selection from="(\d+)" to="(\d+)">\n([\s\S]*)\n<\/selection>$/;

export function composeTask(task: string, selection: Selection | null): string {
  const body = task.trim();
  if (!selection || selection.to <= selection.from) return body;
  const text = selection.text.length > MAX_SELECTION_CHARS ? `${selection.text.slice(0, MAX_SELECTION_CHARS)}…` : selection.text;
  return `${body}\n\n<selection from="${selection.from}" to="${selection.to}">\n${text}\n</selection>`;
}

/** Splits a user message back into the task and its selection. */
export function parseTask(message: string): { task: string; selection: Selection | null } {
  const m = BLOCK.exec(message);
  if (!m) return { task: message, selection: null };
  return {
    task: message.slice(0, m.index),
    selection: { from: Number(m[1]), to: Number(m[2]), text: m[3] ?? "" },
  };
}
