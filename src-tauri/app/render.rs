//! How the window's web view draws, on Linux.
//!
//! WebKitGTK composites a page with OpenGL. Where no GPU can be reached (no DRM render
//! node: virtual machines, containers, remote desktops, a missing driver), that OpenGL is
//! Mesa's software rasteriser, and compositing makes the first screen late without making
//! anything smoother: measured on such a machine (Xvfb, llvmpipe, `cargo xtask
//! bench-start`), the project list reached the screen after 1.8–2.0 s with compositing
//! and 0.6–0.7 s without (with the list already in index.html), and the app with its
//! WebKit processes held about 100 MiB less. So without a render node the app
//! turns compositing off (`WEBKIT_DISABLE_COMPOSITING_MODE=1`, read by WebKitGTK when it
//! makes the web view), unless the person already chose either way with WebKitGTK's own
//! variables: `WEBKIT_FORCE_COMPOSITING_MODE=1` keeps it on, and a set
//! `WEBKIT_DISABLE_COMPOSITING_MODE` is left as it is. With a render node nothing changes.

use std::path::Path;

/// WebKitGTK's variable that turns compositing off.
pub const DISABLE: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
/// WebKitGTK's variable that keeps compositing on.
pub const FORCE: &str = "WEBKIT_FORCE_COMPOSITING_MODE";

/// What was decided, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositing {
    /// A GPU render node exists: WebKitGTK's own choice.
    WebKitDefault,
    /// No render node: turned off by the app.
    OffWithoutGpu,
    /// The person set one of WebKitGTK's variables; left as they are.
    PersonsChoice,
}

impl Compositing {
    pub fn describe(self) -> &'static str {
        match self {
            Compositing::WebKitDefault => "WebKitGTK's default (a GPU render node exists)",
            Compositing::OffWithoutGpu => "off: no GPU render node, so OpenGL would be software (set WEBKIT_FORCE_COMPOSITING_MODE=1 to keep it on)",
            Compositing::PersonsChoice => "as set by WEBKIT_FORCE_COMPOSITING_MODE / WEBKIT_DISABLE_COMPOSITING_MODE",
        }
    }
}

/// The decision from the environment (`var`) and whether a render node exists.
pub fn decide(var: impl Fn(&str) -> Option<String>, has_render_node: bool) -> Compositing {
    if var(FORCE).is_some() || var(DISABLE).is_some() {
        Compositing::PersonsChoice
    } else if has_render_node {
        Compositing::WebKitDefault
    } else {
        Compositing::OffWithoutGpu
    }
}

/// Whether `dri` (normally `/dev/dri`) holds a render node (`renderD128`, …).
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).map(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD"))).unwrap_or(false)
}

/// Decides and sets the variable. Called first thing in `run`, while the process has
/// one thread and before WebKitGTK reads its environment.
pub fn apply() -> Compositing {
    if !cfg!(target_os = "linux") {
        return Compositing::WebKitDefault;
    }
    let decision = decide(|key| std::env::var_os(key).map(|v| v.to_string_lossy().into_owned()), has_render_node(Path::new("/dev/dri")));
    if decision == Compositing::OffWithoutGpu {
        std::env::set_var(DISABLE, "1");
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn compositing_goes_off_only_without_a_render_node_and_without_the_persons_choice() {
        assert_eq!(decide(env(&[]), false), Compositing::OffWithoutGpu);
        assert_eq!(decide(env(&[]), true), Compositing::WebKitDefault);
        assert_eq!(decide(env(&[(FORCE, "1")]), false), Compositing::PersonsChoice);
        assert_eq!(decide(env(&[(DISABLE, "0")]), false), Compositing::PersonsChoice);
        assert_eq!(decide(env(&[(DISABLE, "1")]), true), Compositing::PersonsChoice);
        assert_eq!(decide(env(&[("OTHER", "1")]), false), Compositing::OffWithoutGpu);
    }

    #[test]
    fn a_render_node_is_a_renderd_entry_of_the_folder() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        assert!(!has_render_node(&dir.path().join("missing")), "no folder, no node");
        std::fs::write(dir.path().join("card0"), b"").expect("a file");
        assert!(!has_render_node(dir.path()), "a card node is not a render node");
        std::fs::write(dir.path().join("renderD128"), b"").expect("a file");
        assert!(has_render_node(dir.path()));
    }
}
