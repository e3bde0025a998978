//! Numbers as platforms and people write them, parsed once, here: `1,234`, `"1,234"`,
//! `1.2万`, `3.4w`, `1.1亿`, `2.5k`, `10w+` / `10万+` (a lower bound), `12.3%`, decimals,
//! `1.23457E+18`. A missing value (`-`, `--`, `—`, blank, `N/A`) is `None`, never 0.
//!
//! Written by hand (about 60 lines): no crate parses `1.2万` (`chinese-number` reads
//! `一百二十三`, not abbreviated counts), and the rules are the research's (§1.6).

use serde::{Deserialize, Serialize};

/// How exact a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Qualifier {
    Exact,
    /// `10w+`, `10万+`: at least this much.
    LowerBound,
    /// `1.2万`, `2.5k`: the platform rounded it.
    Rounded,
}

/// A number read from text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parsed {
    pub value: f64,
    pub qualifier: Qualifier,
    /// The text ended in `%`: `value` is still the number before the sign (12.3).
    pub percent: bool,
}

/// Why a text is not a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a number (write 1234, 1,234, 1.2万, 3.4w, 2.5k, 10w+ or 12.3%)")]
pub struct NotANumber {
    pub text: String,
}

/// The texts that mean "not reported".
const MISSING: &[&str] = &["", "-", "--", "---", "—", "——", "–", "－", "/", "n/a", "na", "null", "none", "nan", "暂无", "无"];

/// Parses `raw`; `Ok(None)` when it says "missing".
pub fn parse(raw: &str) -> Result<Option<Parsed>, NotANumber> {
    let bad = || NotANumber { text: raw.chars().take(60).collect() };
    let mut text = raw.trim().trim_matches('"').trim();
    if MISSING.iter().any(|m| text.eq_ignore_ascii_case(m)) {
        return Ok(None);
    }
    let mut qualifier = Qualifier::Exact;
    if let Some(rest) = text.strip_suffix('+').or_else(|| text.strip_suffix('＋')) {
        text = rest.trim_end();
        qualifier = Qualifier::LowerBound;
    }
    let mut percent = false;
    if let Some(rest) = text.strip_suffix('%').or_else(|| text.strip_suffix('％')) {
        text = rest.trim_end();
        percent = true;
    }
    let mut multiplier = 1.0;
    for (suffix, factor) in [("万", 1e4), ("w", 1e4), ("W", 1e4), ("亿", 1e8), ("千", 1e3), ("k", 1e3), ("K", 1e3), ("m", 1e6), ("M", 1e6)] {
        if let Some(rest) = text.strip_suffix(suffix) {
            if percent {
                return Err(bad());
            }
            text = rest.trim_end();
            multiplier = factor;
            if qualifier == Qualifier::Exact {
                qualifier = Qualifier::Rounded;
            }
            break;
        }
    }
    let digits: String = text.chars().filter(|c| !matches!(c, ',' | '，' | '_' | ' ' | '\u{a0}')).collect();
    // Thousands separators only between digit groups: "1,2,3" is refused below by the
    // grouping check, so a list is not read as one number.
    if text.contains([',', '，']) && !grouped(text) {
        return Err(bad());
    }
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'e' | b'E' | b'+')) {
        return Err(bad());
    }
    let plain: f64 = digits.parse().map_err(|_| bad())?;
    let value = scaled(&digits, multiplier).unwrap_or(plain * multiplier);
    if !value.is_finite() {
        return Err(bad());
    }
    Ok(Some(Parsed { value, qualifier, percent }))
}

/// `1.2` × 1e4 without binary noise (`1.2 * 1e4` is 12000.000000000002): the digits
/// as an integer times the multiplier over the power of ten, when that is exact.
fn scaled(digits: &str, multiplier: f64) -> Option<f64> {
    if multiplier == 1.0 {
        return None;
    }
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 8 {
        return None;
    }
    let mantissa: u64 = format!("{int}{frac}").parse().ok()?;
    let power = 10f64.powi(i32::try_from(frac.len()).ok()?);
    let step = multiplier / power;
    (step.fract() == 0.0 && mantissa < (1 << 53)).then_some(mantissa as f64 * step)
}

/// True for `1,234,567` (groups of three after the first), with `,` or `，`.
fn grouped(text: &str) -> bool {
    let integer = text.split('.').next().unwrap_or("").trim_start_matches('-');
    let groups: Vec<&str> = integer.split([',', '，']).collect();
    groups.len() > 1 && (1..=3).contains(&groups[0].len()) && groups[1..].iter().all(|g| g.len() == 3) && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(raw: &str) -> (f64, Qualifier, bool) {
        let p = parse(raw).unwrap().unwrap();
        (p.value, p.qualifier, p.percent)
    }

    #[test]
    fn the_research_forms() {
        assert_eq!(value("1,234"), (1234.0, Qualifier::Exact, false));
        assert_eq!(value("\"1,234\""), (1234.0, Qualifier::Exact, false));
        assert_eq!(value("1.2万"), (12000.0, Qualifier::Rounded, false));
        assert_eq!(value("3.4w"), (34000.0, Qualifier::Rounded, false));
        assert_eq!(value("1.1亿"), (110_000_000.0, Qualifier::Rounded, false));
        assert_eq!(value("2.5k"), (2500.0, Qualifier::Rounded, false));
        assert_eq!(value("10w+"), (100_000.0, Qualifier::LowerBound, false));
        assert_eq!(value("10万+"), (100_000.0, Qualifier::LowerBound, false));
        assert_eq!(value("12.3%"), (12.3, Qualifier::Exact, true));
        assert_eq!(value("0.0374"), (0.0374, Qualifier::Exact, false));
        assert_eq!(value("1.23457E+18"), (1.23457e18, Qualifier::Exact, false));
        assert_eq!(value("-3"), (-3.0, Qualifier::Exact, false));
    }

    #[test]
    fn missing_is_none_never_zero() {
        for raw in ["", " ", "-", "--", "—", "N/A", "null", "暂无"] {
            assert_eq!(parse(raw), Ok(None), "{raw:?}");
        }
    }

    #[test]
    fn words_and_lists_are_refused() {
        for raw in ["abc", "1,2,3", "12%万", "1.2.3", "万", "1e999"] {
            assert!(parse(raw).is_err(), "{raw:?}");
        }
    }
}
