//! Go's `net/mail.ParseAddress` and `net/url.ParseRequestURI` as operator-framework/api's
//! OperatorHub validator calls them on a CSV's maintainer emails and link URLs: the optional
//! `operatorhub` group must accept and refuse what operator-sdk does (`admin@localhost` and
//! `ftp://…` pass there; `docs.acme` and `Ops Team` do not), with Go's error texts.
//!
//! Covered: addresses as `local@domain` (dot-atom or quoted local part, dot-atom or
//! `[literal]` domain) with an optional trailing `(comment)`, and `Display Name <addr>` with a
//! phrase of atoms and quoted strings; URIs as Go's request-URI parser splits them (scheme,
//! opaque part, authority with userinfo, host and port, path). Group syntax (`list: a@b;`)
//! and nested comments are not reproduced; they do not occur in CSVs.

/// Whether Go's `mail.ParseAddress(s)` succeeds; the error is Go's text (`mail: …`).
pub fn parse_mail_address(s: &str) -> Result<(), String> {
    let mut p = Parser { s };
    p.skip_space();
    if p.s.is_empty() {
        return Err("mail: no address".into());
    }
    let orig = p.s;
    if p.addr_spec().is_ok() {
        p.skip_space();
        if p.s.starts_with('(') && !p.skip_comment() {
            return Err("mail: misformatted parenthetical comment".into());
        }
        return p.end();
    }
    p.s = orig;
    let mut phrase = String::new();
    if !p.s.starts_with('<') {
        phrase = p.phrase()?;
    }
    p.skip_space();
    if !p.consume('<') {
        if phrase.chars().all(|c| is_atext(c, true)) {
            return Err("mail: missing '@' or angle-addr".into());
        }
        return Err("mail: no angle-addr".into());
    }
    p.addr_spec()?;
    if !p.consume('>') {
        return Err("mail: unclosed angle-addr".into());
    }
    p.skip_space();
    if p.s.starts_with('(') && !p.skip_comment() {
        return Err("mail: misformatted parenthetical comment".into());
    }
    p.end()
}

struct Parser<'a> {
    s: &'a str,
}

fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => ('!'..='~').contains(&c) || !c.is_ascii(),
    }
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    fn consume(&mut self, c: char) -> bool {
        match self.s.strip_prefix(c) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }

    fn end(&mut self) -> Result<(), String> {
        self.skip_space();
        if self.s.is_empty() {
            Ok(())
        } else {
            Err(format!("mail: expected single address, got {:?}", self.s))
        }
    }

    /// A parenthetical comment (not nested); false when it does not close.
    fn skip_comment(&mut self) -> bool {
        match self.s.find(')') {
            Some(end) => {
                self.s = &self.s[end + 1..];
                self.skip_space();
                true
            }
            None => false,
        }
    }

    fn atom(&mut self, dot: bool, permissive: bool) -> Result<String, String> {
        let end = self
            .s
            .char_indices()
            .find(|(_, c)| !is_atext(*c, dot))
            .map_or(self.s.len(), |(i, _)| i);
        if end == 0 {
            return Err("mail: invalid string".into());
        }
        let atom = &self.s[..end];
        if !permissive {
            if atom.starts_with('.') {
                return Err("mail: leading dot in atom".into());
            }
            if atom.contains("..") {
                return Err("mail: double dot in atom".into());
            }
            if atom.ends_with('.') {
                return Err("mail: trailing dot in atom".into());
            }
        }
        self.s = &self.s[end..];
        Ok(atom.to_string())
    }

    fn quoted(&mut self) -> Result<String, String> {
        let body = &self.s[1..];
        let mut out = String::new();
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            if escaped {
                out.push(c);
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                self.s = &body[i + 1..];
                return Ok(out);
            } else if c == '\t' || c == ' ' || ('!'..='~').contains(&c) || !c.is_ascii() {
                out.push(c);
            } else {
                return Err(format!("mail: bad character in quoted-string: {c:?}"));
            }
        }
        Err("mail: unclosed quoted-string".into())
    }

    fn addr_spec(&mut self) -> Result<(), String> {
        self.skip_space();
        if self.s.is_empty() {
            return Err("mail: no addr-spec".into());
        }
        if self.s.starts_with('"') {
            if self.quoted()?.is_empty() {
                return Err("mail: empty quoted-string in addr-spec".into());
            }
        } else {
            self.atom(true, false)?;
        }
        if !self.consume('@') {
            return Err("mail: missing @ in addr-spec".into());
        }
        self.skip_space();
        if self.s.is_empty() {
            return Err("mail: no domain in addr-spec".into());
        }
        if self.s.starts_with('[') {
            match self.s.find(']') {
                Some(end) => self.s = &self.s[end + 1..],
                None => return Err("mail: unclosed domain-literal".into()),
            }
        } else {
            self.atom(true, false)?;
        }
        Ok(())
    }

    fn phrase(&mut self) -> Result<String, String> {
        let mut words: Vec<String> = Vec::new();
        loop {
            self.skip_space();
            if self.s.is_empty() {
                break;
            }
            let word = if self.s.starts_with('"') {
                self.quoted()?
            } else {
                match self.atom(true, true) {
                    Ok(w) => w,
                    Err(_) => break,
                }
            };
            words.push(word);
        }
        if words.is_empty() {
            return Err("mail: missing word in phrase: mail: invalid string".into());
        }
        Ok(words.join(" "))
    }
}

/// Whether Go's `url.ParseRequestURI(s)` succeeds; the error is Go's text
/// (`parse "docs.acme": invalid URI for request`).
pub fn parse_request_uri(s: &str) -> Result<(), String> {
    let fail = |why: &str| Err(format!("parse {s:?}: {why}"));
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return fail("net/url: invalid control character in URL");
    }
    if s.is_empty() {
        return fail("empty url");
    }
    if s == "*" {
        return Ok(());
    }
    let (scheme, rest) = match scheme_of(s) {
        Ok(split) => split,
        Err(why) => return fail(why),
    };
    if !rest.starts_with('/') {
        if scheme.is_some() {
            return Ok(()); // an opaque URI such as mailto:x
        }
        return fail("invalid URI for request");
    }
    // Go reads an authority only after a scheme when parsing a request URI.
    let Some(after) = rest.strip_prefix("//").filter(|_| scheme.is_some()) else {
        return Ok(()); // an absolute path
    };
    let authority_end = after.find('/').unwrap_or(after.len());
    let authority = &after[..authority_end];
    let authority = authority.split('?').next().unwrap_or(authority);
    let host = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            if userinfo
                .chars()
                .any(|c| !(c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c)))
            {
                return fail("net/url: invalid userinfo");
            }
            &authority[at + 1..]
        }
        None => authority,
    };
    if let Some(v6) = host.strip_prefix('[') {
        let Some(close) = v6.find(']') else {
            return fail("missing ']' in host");
        };
        let port = &v6[close + 1..];
        if !port.is_empty() && !valid_port(port) {
            return fail(&format!("invalid port {port:?} after host"));
        }
        return Ok(());
    }
    if let Some(colon) = host.rfind(':') {
        let port = &host[colon..];
        if !valid_port(port) {
            return fail(&format!("invalid port {port:?} after host"));
        }
    }
    if let Some(bad) = host.chars().find(|c| {
        c.is_ascii() && !(c.is_ascii_alphanumeric() || "-_.~!$&'()*+,;=:[]<>\"%".contains(*c))
    }) {
        return fail(&format!(
            "invalid character {:?} in host name",
            bad.to_string()
        ));
    }
    Ok(())
}

fn valid_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// Go's `getScheme`: a scheme is a letter then letters, digits, `+`, `-`, `.`, up to `:`.
fn scheme_of(s: &str) -> Result<(Option<&str>, &str), &'static str> {
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            '0'..='9' | '+' | '-' | '.' => return Ok((None, s)),
            ':' if i == 0 => return Err("missing protocol scheme"),
            ':' => return Ok((Some(&s[..i]), &s[i + 1..])),
            _ => return Ok((None, s)),
        }
    }
    Ok((None, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_as_go_reads_them() {
        for ok in [
            "ops@acme.example",
            "admin@localhost",
            "Ops Team <ops@acme.example>",
            "\"Ops, Team\" <ops@acme.example>",
            "<ops@acme.example>",
            "ops@acme.example (pager)",
            " ops@acme.example ",
            "ops@[10.0.0.1]",
        ] {
            assert_eq!(parse_mail_address(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "mail: no address"),
            ("ops-at-acme", "mail: missing '@' or angle-addr"),
            ("Ops Team", "mail: no angle-addr"),
            ("ops@", "mail: missing '@' or angle-addr"),
            ("Ops <ops@acme.example", "mail: unclosed angle-addr"),
            (
                "ops@acme.example, dev@acme.example",
                "mail: expected single address, got \", dev@acme.example\"",
            ),
        ] {
            assert_eq!(parse_mail_address(bad), Err(why.to_string()), "{bad}");
        }
    }

    #[test]
    fn request_uris_as_go_reads_them() {
        for ok in [
            "https://acme.example/docs",
            "http://acme.example:8080",
            "ftp://acme.example",
            "/docs",
            "mailto:ops@acme.example",
            "https://acme.example/a b",
            "https://user:pw@acme.example/",
        ] {
            assert_eq!(parse_request_uri(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "docs.acme",
            "://x",
            "https://acme.example:80x/",
            "https://acme example/",
            "http://a\u{7f}",
        ] {
            assert!(parse_request_uri(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_request_uri("docs.acme"),
            Err("parse \"docs.acme\": invalid URI for request".to_string())
        );
    }
}
