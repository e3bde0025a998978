//! The length of a domain label once punycode-encoded, as X measures it against the
//! 63-unit DNS limit: a label too long once encoded ends the URL there.

/// The length of `punycode.toASCII(label)` (Node's punycode 2.1): the label is split
/// again at the ideographic and full-width full stops, and each part with a code point
/// above U+007F becomes `xn--` and its RFC 3492 encoding.
pub(super) fn punycode_label_len(label: &[u32]) -> usize {
    let parts = label.split(|c| matches!(c, 0x3002 | 0xFF0E | 0xFF61));
    let mut total = 0;
    let mut n_parts = 0usize;
    for part in parts {
        n_parts += 1;
        total += if part.iter().any(|c| *c > 0x7F) { 4 + punycode_encoded_len(part) } else { part.len() };
    }
    total + n_parts.saturating_sub(1)
}

/// The length of the RFC 3492 encoding of `input` (basic code points, delimiter, and
/// one base-36 digit string per inserted code point).
fn punycode_encoded_len(points: &[u32]) -> usize {
    const BASE: u32 = 36;
    const T_MIN: u32 = 1;
    const T_MAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    fn adapt(mut delta: u32, n_points: u32, first: bool) -> u32 {
        delta = if first { delta / DAMP } else { delta / 2 };
        delta += delta / n_points;
        let mut k = 0;
        while delta > ((BASE - T_MIN) * T_MAX) / 2 {
            delta /= BASE - T_MIN;
            k += BASE;
        }
        k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
    }
    let n_basic = points.iter().filter(|p| **p < 0x80).count() as u32;
    let mut len = n_basic as usize + usize::from(n_basic > 0);
    let (mut n, mut delta, mut bias) = (0x80u32, 0u32, 72u32);
    let mut handled = n_basic;
    while (handled as usize) < points.len() {
        let Some(&m) = points.iter().filter(|p| **p >= n).min() else { break };
        delta = delta.saturating_add((m - n).saturating_mul(handled + 1));
        n = m;
        for &p in points {
            if p < n {
                delta = delta.saturating_add(1);
            }
            if p == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = if k <= bias {
                        T_MIN
                    } else if k >= bias + T_MAX {
                        T_MAX
                    } else {
                        k - bias
                    };
                    if q < t {
                        break;
                    }
                    len += 1;
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                len += 1;
                bias = adapt(delta, handled + 1, handled == n_basic);
                delta = 0;
                handled += 1;
            }
        }
        delta = delta.saturating_add(1);
        n += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punycode_lengths_follow_rfc_3492() {
        // RFC 3492 7.1 (A) Arabic (Egyptian) and (L) "3年B組金八先生".
        let code_points = |text: &str| text.chars().map(|c| c as u32).collect::<Vec<u32>>();
        let arabic = code_points("\u{0644}\u{064A}\u{0647}\u{0645}\u{0627}\u{0628}\u{062A}\u{0643}\u{0644}\u{0645}\u{0648}\u{0634}\u{0639}\u{0631}\u{0628}\u{064A}\u{061F}");
        assert_eq!(punycode_encoded_len(&arabic), "egbpdaj6bu4bxfgehfvwxn".len());
        let mixed = code_points("3年B組金八先生");
        assert_eq!(punycode_encoded_len(&mixed), "3B-ww4c5e180e575a65lsy2b".len());
        assert_eq!(punycode_label_len(&code_points("看。example")), "xn--c1y.example".len());
    }
}
