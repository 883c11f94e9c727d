//! Text for plugin results. Room content is untrusted: apconnect refuses
//! plugin output that carries HTML tags, script or `ui://` URLs and
//! credential-shaped strings, so one hostile payload quoted as is would void
//! a whole result. [`clean`] defuses such text before it is quoted; it is
//! the same transformation as the Go SDK's `text.Clean`.

/// Cuts `s` to `max` characters (marking a cut with "…"), turns control
/// characters into spaces and defuses what the host's content policy
/// refuses: `<` and `>` become look-alikes, so does `:` after a refused URL
/// scheme, and JWT dots, PEM dashes and the words "bearer" and
/// "apconnect-ed25519" are broken up.
pub fn clean(s: &str, max: usize) -> String {
    let mut s = s.to_string();
    if s.len() > max && s.chars().count() > max {
        s = s.chars().take(max.saturating_sub(1)).collect::<String>() + "…";
    }
    if matches!(s.len(), 86 | 88 | 128) {
        s.push('…'); // never shaped like a raw 64-byte key
    }
    let hazard = s.bytes().any(|c| c < 0x20 || c == 0x7f || c == b'<' || c == b'>');
    let scheme = s.contains(':') && has_scheme(&s);
    let jwt = s.contains("eyJ");
    let pem = s.contains("-----");
    let bearer = contains_fold(&s, "bearer");
    let key = contains_fold(&s, "apconnect-ed25519");
    if !hazard && !scheme && !jwt && !pem && !bearer && !key {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '<' => out.push('‹'),
            '>' => out.push('›'),
            ':' if scheme => out.push('∶'),
            '.' if jwt => out.push('·'),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push(' '),
            c => out.push(c),
        }
    }
    if pem {
        out = out.replace("-----", "—");
    }
    break_word(&break_word(&out, "bearer"), "apconnect-ed25519")
}

/// [`clean`] in double quotes.
pub fn quote(s: &str, max: usize) -> String {
    format!("\"{}\"", clean(s, max))
}

/// "1 word" or "n words".
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {}", word)
    } else {
        format!("{} {}s", n, word)
    }
}

/// A duration in milliseconds, roughly: "3d", "5h", "12m" or "40s" (a
/// negative one is "0s"); the Go SDK's `text.Until`.
pub fn until(ms: i64) -> String {
    if ms >= 48 * 3_600_000 {
        format!("{}d", ms / (24 * 3_600_000))
    } else if ms >= 2 * 3_600_000 {
        format!("{}h", ms / 3_600_000)
    } else if ms >= 60_000 {
        format!("{}m", ms / 60_000)
    } else {
        format!("{}s", (ms / 1000).max(0))
    }
}

fn has_scheme(s: &str) -> bool {
    for (i, _) in s.match_indices(':') {
        let (before, after) = (&s[..i], &s[i + 1..]);
        if ends_with_fold(before, "javascript")
            || ends_with_fold(before, "vbscript")
            || ends_with_fold(before, "data") && (starts_with_fold(after, "text/html") || starts_with_fold(after, "image/svg"))
            || ends_with_fold(before, "ui") && after.starts_with("//")
        {
            return true;
        }
    }
    false
}

fn ends_with_fold(s: &str, w: &str) -> bool {
    s.len() >= w.len() && s.as_bytes()[s.len() - w.len()..].eq_ignore_ascii_case(w.as_bytes())
}

fn starts_with_fold(s: &str, w: &str) -> bool {
    s.len() >= w.len() && s.as_bytes()[..w.len()].eq_ignore_ascii_case(w.as_bytes())
}

fn contains_fold(s: &str, w: &str) -> bool {
    s.as_bytes().windows(w.len()).any(|win| win.eq_ignore_ascii_case(w.as_bytes()))
}

/// Puts a middle dot before the last two letters of every occurrence of the
/// lowercase ASCII word `w` in `s`, in any case.
fn break_word(s: &str, w: &str) -> String {
    if !contains_fold(s, w) {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len() + 8);
    let mut i = 0;
    while i < b.len() {
        if i + w.len() <= b.len() && b[i..i + w.len()].eq_ignore_ascii_case(w.as_bytes()) {
            out.extend_from_slice(&b[i..i + w.len() - 2]);
            out.extend_from_slice("·".as_bytes());
            out.extend_from_slice(&b[i + w.len() - 2..i + w.len()]);
            i += w.len();
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    // Only ASCII was matched and split, so the bytes are still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defuses_like_the_go_sdk() {
        assert_eq!(clean("<script>alert(1)</script>", 64), "‹script›alert(1)‹/script›");
        assert_eq!(clean("plain words", 64), "plain words");
        assert_eq!(clean("see javascript:alert(1)", 64), "see javascript∶alert(1)");
        assert_eq!(clean("Bearer abc", 64), "Bear·er abc");
        assert_eq!(clean("a\nb", 64), "a b");
        assert_eq!(clean("abcdef", 4), "abc…");
        assert_eq!(clean("eyJa.b.c", 64), "eyJa·b·c");
        assert_eq!(plural(1, "agent"), "1 agent");
        assert_eq!(plural(3, "agent"), "3 agents");
        assert_eq!(until(3 * 24 * 3_600_000), "3d");
        assert_eq!(until(47 * 3_600_000), "47h");
        assert_eq!(until(119 * 60_000), "119m");
        assert_eq!(until(59_999), "59s");
        assert_eq!(until(-5), "0s");
    }
}
