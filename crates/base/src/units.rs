//! Units on the command line: byte sizes with binary or decimal suffixes, and
//! byte counts printed for humans.

use crate::error::Result;
use crate::invalid;

/// `text` as echoed in a message: at most 40 characters, so that a
/// message stays one line whatever the input.
pub fn shorten(text: &str) -> String {
    if text.chars().count() > 40 {
        format!("{}...", text.chars().take(37).collect::<String>())
    } else {
        text.to_string()
    }
}

/// Parses a byte size: `1024`, `64KiB`, `1MiB`, `1GiB`, `2TiB`, `10kB`, `1MB`, `1GB`, `512B`.
/// Binary suffixes are powers of 1024, decimal ones powers of 1000.
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let shown = shorten(text);
    let text = shown.as_str();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return Err(invalid!("size '{text}' does not start with a number"));
    }
    let value: u64 = digits
        .parse()
        .map_err(|_| invalid!("size '{text}' is too large"))?;
    // Units in any case: 1kib, 1KiB and 1KIB are the same size.
    let factor: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        "tib" | "t" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => {
            return Err(invalid!(
                "size '{text}' has unknown unit '{}' (use B, KiB, MiB, GiB, TiB, kB, MB, GB, in any case)",
                suffix.trim()
            ))
        }
    };
    value
        .checked_mul(factor)
        .ok_or_else(|| invalid!("size '{text}' overflows 64 bits"))
}

/// Formats a byte count with the largest binary unit that divides it exactly
/// (so the text parses back to the same value).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{}", bytes / size, name);
        }
    }
    format!("{bytes}B")
}

/// Parses a list or range of sizes: `8B..64MiB` (powers of two between the ends,
/// inclusive) or `1KiB,4KiB,1MiB`.
pub fn parse_size_list(text: &str) -> Result<Vec<u64>> {
    if let Some((lo, hi)) = text.split_once("..") {
        let lo = parse_bytes(lo)?;
        let hi = parse_bytes(hi)?;
        if lo == 0 || lo > hi {
            return Err(invalid!(
                "size range '{text}' must go from a positive size up to a larger one"
            ));
        }
        let mut sizes = Vec::new();
        let mut s = lo;
        while s <= hi {
            sizes.push(s);
            match s.checked_mul(2) {
                Some(next) => s = next,
                None => break,
            }
        }
        Ok(sizes)
    } else {
        text.split(',').map(parse_bytes).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes() {
        assert_eq!(parse_bytes("1024").unwrap(), 1024);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65536);
        assert_eq!(parse_bytes("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_bytes("16B").unwrap(), 16);
        // Any case.
        assert_eq!(parse_bytes("1kib").unwrap(), 1024);
        assert_eq!(parse_bytes("2MIB").unwrap(), 2 << 20);
        assert_eq!(parse_bytes("3mb").unwrap(), 3_000_000);
        assert_eq!(parse_bytes("4kB").unwrap(), 4000);
        assert!(parse_bytes("abc").is_err());
        assert!(parse_bytes("1XB").is_err());
        assert!(parse_bytes("99999999999999999999").is_err());
        assert!(parse_bytes("20000000TiB").is_err());
    }

    #[test]
    fn formats_round_trip() {
        for b in [0u64, 1, 1000, 1024, 65536, 3 << 20, 1 << 30] {
            assert_eq!(parse_bytes(&format_bytes(b)).unwrap(), b);
        }
    }

    #[test]
    fn size_ranges() {
        assert_eq!(parse_size_list("8B..64B").unwrap(), vec![8, 16, 32, 64]);
        assert_eq!(parse_size_list("1KiB,2KiB").unwrap(), vec![1024, 2048]);
        assert!(parse_size_list("64B..8B").is_err());
    }
}

/// Seconds in engineering units for people: `272.547 ms`, `1.064 us`,
/// `12.1 s` (four significant digits; the JSON keeps every digit).
pub fn format_seconds(s: f64) -> String {
    if !s.is_finite() {
        return format!("{s} s");
    }
    if s == 0.0 {
        return "0 s".to_string();
    }
    let (value, unit) = match s.abs() {
        a if a >= 1.0 => (s, "s"),
        a if a >= 1e-3 => (s * 1e3, "ms"),
        a if a >= 1e-6 => (s * 1e6, "us"),
        _ => (s * 1e9, "ns"),
    };
    let digits = if value.abs() >= 100.0 {
        1
    } else if value.abs() >= 10.0 {
        2
    } else {
        3
    };
    format!("{value:.digits$} {unit}")
}

#[cfg(test)]
mod seconds_tests {
    use super::format_seconds;

    #[test]
    fn engineering_units() {
        assert_eq!(format_seconds(0.272547456), "272.5 ms");
        assert_eq!(format_seconds(1.064e-6), "1.064 us");
        assert_eq!(format_seconds(12.34), "12.34 s");
        assert_eq!(format_seconds(3e-10), "0.300 ns");
        assert_eq!(format_seconds(0.0), "0 s");
    }
}
