//! Build script of the desktop app. Plain `cargo build` must work on a fresh clone, so
//! a missing `ui/dist` (the UI is built by npm, not cargo) gets a placeholder page.

const PLACEHOLDER_HTML: &str = "<!doctype html><meta charset=\"utf-8\"><title>Inkstone</title>\
<body style=\"font-family: system-ui, sans-serif; padding: 2rem\"><h1>Inkstone</h1>\
<p>The UI has not been built. Run <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code>, then rebuild the app.</p></body>";

fn main() {
    println!("cargo:rerun-if-changed=ui/dist");
    println!("cargo:rerun-if-changed=icons");
    println!("cargo:rerun-if-changed=tauri.conf.json");
    let dist = std::path::Path::new("ui/dist");
    if !dist.join("index.html").exists() {
        if let Err(error) = std::fs::create_dir_all(dist).and_then(|_| std::fs::write(dist.join("index.html"), PLACEHOLDER_HTML)) {
            println!("cargo:warning=could not write a placeholder ui/dist: {error}");
        }
        println!("cargo:warning=ui/dist was missing; embedded a placeholder page (build the UI with npm --prefix ui run build)");
    }
    tauri_build::build();
}
