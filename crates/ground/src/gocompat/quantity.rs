//! Kubernetes `resource.Quantity` (k8s.io/apimachinery `pkg/api/resource`): parsing and the
//! canonical text its `MarshalJSON` writes. OLM v1 decodes every Deployment into Go types before
//! writing it, so `cpu: 2000m` comes out as `"2"` and `memory: 1024Mi` as `1Gi`; a byte-for-byte
//! render has to canonicalize the same way.

/// The three formats a quantity remembers from its suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

/// Why a quantity text was refused (Go's `ErrFormatWrong`/`ErrSuffix`/`ErrNumeric` texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The text is not `[+-]digits[.digits][suffix]`.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    /// The suffix is unknown.
    #[error("unable to parse quantity's suffix")]
    Suffix,
    /// The number does not fit.
    #[error("unable to parse quantity's numeric part")]
    Numeric,
}

/// Parses `text` as Kubernetes does and returns the canonical text (`"0"` for zero).
pub fn canonical(text: &str) -> Result<String, QuantityError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(QuantityError::Format);
    }
    let (positive, rest) = match text.as_bytes()[0] {
        b'+' => (true, &text[1..]),
        b'-' => (false, &text[1..]),
        _ => (true, text),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(num_end);
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if int_part.is_empty() && frac_part.is_empty() || frac_part.contains('.') {
        return Err(QuantityError::Format);
    }
    let (base2_exp, base10_exp, format) = interpret(suffix)?;
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return Err(QuantityError::Numeric);
    }
    let mut mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| QuantityError::Numeric)?
    };
    let mut scale: i32 = base10_exp - frac_part.len() as i32;
    for _ in 0..base2_exp {
        mantissa = mantissa.checked_mul(2).ok_or(QuantityError::Numeric)?;
    }
    if mantissa == 0 {
        return Ok("0".to_string());
    }
    // Values below a nano-unit round up to it (inf.RoundUp).
    while scale < -9 {
        let rem = mantissa % 10;
        mantissa /= 10;
        if rem != 0 {
            mantissa += 1;
        }
        scale += 1;
    }
    if !positive {
        mantissa = -mantissa;
    }
    let mut format = format;
    if format == Format::BinarySI {
        let small = scale <= 0 && {
            let mut v = mantissa.abs();
            for _ in 0..(-scale) {
                v /= 10;
            }
            v < 1024
        } || scale == 0 && mantissa.abs() < 1024;
        let integral = scale >= 0 || {
            let mut v = mantissa;
            let mut ok = true;
            for _ in 0..(-scale) {
                if v % 10 != 0 {
                    ok = false;
                    break;
                }
                v /= 10;
            }
            ok
        };
        if small || !integral {
            format = Format::DecimalSI;
        }
    }
    match format {
        Format::BinarySI => {
            let mut v = mantissa;
            while scale > 0 {
                v = v.checked_mul(10).ok_or(QuantityError::Numeric)?;
                scale -= 1;
            }
            while scale < 0 {
                v /= 10;
                scale += 1;
            }
            let mut exp = 0usize;
            while exp < 6 && v % 1024 == 0 {
                v /= 1024;
                exp += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
            Ok(format!("{v}{suffix}"))
        }
        Format::DecimalSI | Format::DecimalExponent => {
            let (mut m, mut e) = (mantissa, scale);
            while m % 10 == 0 {
                m /= 10;
                e += 1;
            }
            while e.rem_euclid(3) != 0 {
                m *= 10;
                e -= 1;
            }
            if format == Format::DecimalExponent {
                return Ok(if e == 0 {
                    m.to_string()
                } else {
                    format!("{m}e{e}")
                });
            }
            while e > 18 {
                m = m.checked_mul(10).ok_or(QuantityError::Numeric)?;
                e -= 1;
            }
            let suffix = match e {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                _ => "",
            };
            Ok(format!("{m}{suffix}"))
        }
    }
}

/// (power of 2, power of 10, format) of a suffix.
fn interpret(suffix: &str) -> Result<(u32, i32, Format), QuantityError> {
    Ok(match suffix {
        "" => (0, 0, Format::DecimalSI),
        "n" => (0, -9, Format::DecimalSI),
        "u" => (0, -6, Format::DecimalSI),
        "m" => (0, -3, Format::DecimalSI),
        "k" => (0, 3, Format::DecimalSI),
        "M" => (0, 6, Format::DecimalSI),
        "G" => (0, 9, Format::DecimalSI),
        "T" => (0, 12, Format::DecimalSI),
        "P" => (0, 15, Format::DecimalSI),
        "E" => (0, 18, Format::DecimalSI),
        "Ki" => (10, 0, Format::BinarySI),
        "Mi" => (20, 0, Format::BinarySI),
        "Gi" => (30, 0, Format::BinarySI),
        "Ti" => (40, 0, Format::BinarySI),
        "Pi" => (50, 0, Format::BinarySI),
        "Ei" => (60, 0, Format::BinarySI),
        s if s.starts_with(['e', 'E']) => {
            let e: i32 = s[1..].parse().map_err(|_| QuantityError::Suffix)?;
            (0, e, Format::DecimalExponent)
        }
        _ => return Err(QuantityError::Suffix),
    })
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn canonical_forms_match_kubernetes() {
        for (input, want) in [
            ("2000m", "2"),
            ("1024Mi", "1Gi"),
            ("100m", "100m"),
            ("0.5", "500m"),
            ("128Mi", "128Mi"),
            ("1.5Gi", "1536Mi"),
            ("500M", "500M"),
            ("1000", "1k"),
            ("0", "0"),
            ("1e3", "1e3"),
            ("10Ki", "10Ki"),
            ("512", "512"),
            ("1500Mi", "1500Mi"),
            ("0.1Gi", "107374182400m"),
        ] {
            assert_eq!(canonical(input).as_deref(), Ok(want), "{input}");
        }
        assert!(canonical("12x").is_err());
    }
}
