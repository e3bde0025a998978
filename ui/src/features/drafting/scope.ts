// A task scoped to a selection of the source. The selection travels as the typed
// `selection {from, to, text}` of `session.submit` (checked by the engine against the
// saved source, recorded in the user-message event, shown in the model's working set).
// Sessions from before that carried it inside the user message, after the task, as one
// tagged block; `parseTask` still turns such a message back into a chip:
//
//   <task>
//
//   <selection from="120" to="164">
//   <the selected text>
//   </selection>
//
// `from`/`to` are UTF-16 offsets into the working copy (what CodeMirror counts, like
// every span in Inkstone). The block was the last thing in the message, so a task that
// itself mentions "<selection" is never misread.

export interface Selection {
  from: number;
  to: number;
  text: string;
}

const BLOCK = /\n\n<selection from="(\d+)" to="(\d+)">\n([\s\S]*)\n<\/selection>$/;

/** Splits a user message of an older session back into the task and its selection. */
export function parseTask(message: string): { task: string; selection: Selection | null } {
  const m = BLOCK.exec(message);
  if (!m) return { task: message, selection: null };
  return {
    task: message.slice(0, m.index),
    selection: { from: Number(m[1]), to: Number(m[2]), text: m[3] ?? "" },
  };
}
