// Renders a short list (the stand-in for Inkstone's project list), then, once that frame
// is painted, tells the app (the bench's mark) with the page's own times.
const scriptStart = performance.timeOrigin + performance.now();
const list = document.getElementById("list");
for (const name of ["First draft", "Second draft", "Notes"]) {
  const li = document.createElement("li");
  li.textContent = name;
  list.appendChild(li);
}
requestAnimationFrame(() =>
  setTimeout(() => {
    const marks = { "page.navigation": performance.timeOrigin, "page.script": scriptStart };
    window.__TAURI_INTERNALS__.invoke("startup_done", { marks });
  }, 0),
);
