//! Comparing olmpack's output with a reference's (opm's goldens, captured outputs): where they
//! first differ, said in one way so a failing byte-for-byte test shows the line to look at.

/// The first line where `got` (olmpack) differs from `want` (opm), or how their lengths differ
/// when one is a prefix of the other.
pub fn first_difference(
    want: &(impl AsRef<[u8]> + ?Sized),
    got: &(impl AsRef<[u8]> + ?Sized),
) -> String {
    let w = String::from_utf8_lossy(want.as_ref());
    let g = String::from_utf8_lossy(got.as_ref());
    for (n, (a, b)) in w.lines().zip(g.lines()).enumerate() {
        if a != b {
            return format!("line {}:\n  opm:     {a:?}\n  olmpack: {b:?}", n + 1);
        }
    }
    format!(
        "lengths differ: opm {} lines, olmpack {} lines",
        w.lines().count(),
        g.lines().count()
    )
}
