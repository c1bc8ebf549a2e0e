//! Error text for people: an error and all its causes on one line. Shared by the commands
//! (their messages) and the library (findings that carry an error, such as an unreadable
//! bundle), so both spell a failure the same way.

/// Renders an error and all its sources as `outer: inner: innermost`, so no cause is lost.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}
