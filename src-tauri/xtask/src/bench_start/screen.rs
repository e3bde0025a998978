//! The on-screen figure: a watcher on the X display that takes the screen's pixels at
//! every damage event and tells when a frame first holds content (many colours).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// Colours a frame needs on the sample grid to count as content: a blank window or a
/// background shows one or two; the minimal app's three-line list about 70 (every 5th
/// pixel of its top-left quarter), Inkstone's first screen about 300.
const CONTENT_COLOURS: usize = 16;
/// The sample grid: every this many pixels across and down.
const GRID: usize = 4;

/// Watches an X display, from before the spawn, for the first frame with content.
pub(super) struct ScreenWatch {
    found: std::sync::mpsc::Receiver<Result<Instant>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl ScreenWatch {
    /// Connects and subscribes to the root window's damage; returns once subscribed, so
    /// nothing drawn after the spawn is missed.
    pub(super) fn start(display: &str) -> Result<ScreenWatch> {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        use x11rb::connection::Connection as _;
        use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};
        let (conn, screen) = x11rb::connect(Some(display)).with_context(|| format!("connecting to the X display {display}"))?;
        conn.damage_query_version(1, 1)?.reply().context("the X server has no DAMAGE extension")?;
        let root = conn.setup().roots[screen].root;
        let damage = conn.generate_id()?;
        conn.damage_create(damage, root, ReportLevel::NON_EMPTY)?.check().context("subscribing to the screen's damage")?;
        let (tell, found) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let _ = tell.send(watch(&conn, screen, damage, &stopped));
        });
        Ok(ScreenWatch { found, stop })
    }

    /// When the first frame with content was drawn (the damage event that announced it).
    pub(super) fn wait(self, at_most: Duration) -> Result<Instant> {
        let result = self.found.recv_timeout(at_most).map_err(|_| anyhow::anyhow!("no frame with content on the screen within {at_most:?}"));
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        result?
    }
}

fn watch(conn: &impl x11rb::connection::Connection, screen: usize, damage: u32, stop: &std::sync::atomic::AtomicBool) -> Result<Instant> {
    use x11rb::protocol::damage::ConnectionExt as _;
    use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat};
    use x11rb::protocol::Event;
    let root = &conn.setup().roots[screen];
    let (width, height) = (root.width_in_pixels, root.height_in_pixels);
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        match conn.poll_for_event()? {
            Some(Event::DamageNotify(_)) => {
                let at = Instant::now();
                // Clears the damage so the next drawing announces itself again.
                conn.damage_subtract(damage, x11rb::NONE, x11rb::NONE)?;
                let image = conn.get_image(ImageFormat::Z_PIXMAP, root.root, 0, 0, width, height, !0)?.reply()?;
                if colours(&image.data, usize::from(width), usize::from(height)) >= CONTENT_COLOURS {
                    return Ok(at);
                }
            }
            Some(_) => {}
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    bail!("stopped before a frame with content")
}

/// Distinct colours on the sample grid of a 32-bit Z-pixmap image.
fn colours(data: &[u8], width: usize, height: usize) -> usize {
    let mut seen = std::collections::HashSet::new();
    for y in (0..height).step_by(GRID) {
        for x in (0..width).step_by(GRID) {
            let at = (y * width + x) * 4;
            if let Some(pixel) = data.get(at..at + 3) {
                seen.insert([pixel[0], pixel[1], pixel[2]]);
            }
        }
    }
    seen.len()
}
