// Moving focus to something that is not on screen yet (a panel that loads its data
// first), without taking it back from wherever the person has moved it meanwhile.

/**
 * Focuses `holder` now (so keys typed from here on go nowhere else), then the first
 * element matching `selector` once it is shown and enabled, within `ms`. Gives up as soon
 * as focus is somewhere other than `holder` or nothing. Returns a function that stops
 * waiting.
 */
export function focusWhenShown(selector: string, holder: HTMLElement | null, ms = 3000): () => void {
  holder?.focus();
  const until = Date.now() + ms;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const untouched = () => {
    const active = document.activeElement;
    return !active || active === document.body || active === holder;
  };
  const attempt = () => {
    timer = null;
    if (!untouched()) return;
    const target = document.querySelector<HTMLElement>(selector);
    if (target && !(target as HTMLTextAreaElement).disabled) {
      target.focus();
      return;
    }
    if (Date.now() < until) timer = setTimeout(attempt, 30);
  };
  attempt();
  return () => {
    if (timer) clearTimeout(timer);
  };
}
