// The font stack by operating system (styles.css: `:root[data-os="linux"]`). Set by the
// entry before the first frame's text is in the page, so that frame's first paint already
// uses it: the named families of the cross-platform stack cost WebKitGTK a lookup each.

/** The `data-os` value for `platform` (navigator.platform), or undefined for the
 * cross-platform stack. */
export function fontOs(platform: string): "linux" | undefined {
  return /^linux/i.test(platform) ? "linux" : undefined;
}

/** Marks the document's root with the OS whose font stack applies. */
export function applyPlatformFonts(platform: string, root: HTMLElement = document.documentElement): void {
  const os = fontOs(platform);
  if (os) root.dataset.os = os;
  else delete root.dataset.os;
}
