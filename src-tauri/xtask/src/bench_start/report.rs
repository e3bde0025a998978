//! The report: median, min and max of each app's figures, the ratios against the
//! minimal app and the target, and each app's startup profile from its marks.

use std::collections::HashMap;
use std::io::Write as _;

use super::{mib, Sample, Which, TARGET_RATIO};

struct Stats {
    median: f64,
    min: f64,
    max: f64,
}

fn stats(values: impl IntoIterator<Item = f64>) -> Stats {
    let mut values: Vec<f64> = values.into_iter().collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    Stats { median, min: values.first().copied().unwrap_or(f64::NAN), max: values.last().copied().unwrap_or(f64::NAN) }
}

pub(super) fn report(samples: &HashMap<Which, Vec<Sample>>) {
    let out = &mut std::io::stdout().lock();
    let empty = Vec::new();
    let of = |which: Which| samples.get(&which).unwrap_or(&empty);
    let shown: Vec<Which> = [Which::Minimal, Which::Baseline, Which::Inkstone].into_iter().filter(|w| *w != Which::Baseline || samples.contains_key(w)).collect();
    let _ = writeln!(
        out,
        "\n{:<22} {:>4} {:>26} {:>26} {:>30} {:>30}",
        "", "n", "on screen ms (med/min/max)", "page mark ms (med/min/max)", "RSS MiB at 5 s (med/min/max)", "PSS MiB at 5 s (med/min/max)"
    );
    for &which in &shown {
        let s = of(which);
        let v = stats(s.iter().map(|x| x.on_screen_ms));
        let t = stats(s.iter().map(|x| x.first_screen_ms));
        let r = stats(s.iter().map(|x| mib(x.rss_kib)));
        let p = stats(s.iter().map(|x| mib(x.pss_kib)));
        let _ = writeln!(
            out,
            "{:<22} {:>4} {:>26} {:>26} {:>30} {:>30}",
            which.name(),
            s.len(),
            format!("{:.0} / {:.0} / {:.0}", v.median, v.min, v.max),
            format!("{:.0} / {:.0} / {:.0}", t.median, t.min, t.max),
            format!("{:.1} / {:.1} / {:.1}", r.median, r.min, r.max),
            format!("{:.1} / {:.1} / {:.1}", p.median, p.min, p.max)
        );
    }
    let median = |which: Which, f: &dyn Fn(&Sample) -> f64| stats(of(which).iter().map(f)).median;
    for &which in shown.iter().filter(|w| **w != Which::Minimal) {
        let ratio = |f: &dyn Fn(&Sample) -> f64| median(which, f) / median(Which::Minimal, f);
        let screen_ratio = ratio(&|x| x.on_screen_ms);
        let mark_ratio = ratio(&|x| x.first_screen_ms);
        let rss_ratio = ratio(&|x| x.rss_kib as f64);
        let pss_ratio = ratio(&|x| x.pss_kib as f64);
        let verdict = if screen_ratio <= TARGET_RATIO { "met" } else { "MISSED" };
        let _ = writeln!(
            out,
            "ratio {} / minimal: on screen {screen_ratio:.2}× (target ≤ {TARGET_RATIO}×: {verdict}), page mark {mark_ratio:.2}×, RSS {rss_ratio:.2}×, PSS {pss_ratio:.2}×",
            which.name()
        );
    }

    for &which in &shown {
        let s = of(which);
        let mut names: Vec<&String> = s.iter().flat_map(|x| x.marks.keys()).collect();
        names.sort();
        names.dedup();
        if names.is_empty() {
            continue;
        }
        let mut rows: Vec<(f64, &String)> = names.into_iter().map(|name| (stats(s.iter().filter_map(|x| x.marks.get(name).copied())).median, name)).collect();
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let _ = writeln!(out, "\n{} startup profile (median ms after the spawn):", which.name());
        let mut previous = 0.0;
        for (at, name) in rows {
            let _ = writeln!(out, "  {name:<28} {at:>7.0}   (+{:.0})", at - previous);
            previous = at;
        }
        let painted = stats(s.iter().map(|x| x.first_screen_ms)).median;
        let _ = writeln!(out, "  {:<28} {painted:>7.0}   (+{:.0})", "startup_done received", painted - previous);
        let on_screen = stats(s.iter().map(|x| x.on_screen_ms)).median;
        let _ = writeln!(out, "  {:<28} {on_screen:>7.0}", "on screen (pixels)");
    }
}
