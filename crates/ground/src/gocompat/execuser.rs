//! runc's `libcontainer/user.GetExecUser`: how docker, BuildKit, podman and containerd turn an
//! image config's `User` (`name`, `uid`, `name:group`, `uid:gid`, …) into the uid, gid and
//! supplementary groups a process (a `RUN` step, or the container itself) runs with, reading
//! the image's own `/etc/passwd` and `/etc/group`.
//!
//! Why reproduce it: files a `RUN` step writes are owned by that uid and gid, and whether a
//! process can read them depends on the same answer; olmpack writes such files itself (opm's
//! serve cache) and must own them, and judge them, as the runtime would.
//!
//! The rules kept from runc: lines are trimmed and empty ones skipped; fields are split at `:`,
//! a number that does not parse counts as 0; a numeric user is always a uid (its passwd entry,
//! when there is one, gives the group), a name must be listed; the first matching entry wins;
//! without an explicit group the gid is the passwd entry's, or 0 when the uid has no entry;
//! an explicit group is looked up in `/etc/group` by gid (numeric) or name, and a numeric one
//! not listed is used as it is; ids must lie in 0..=2^31-1.

/// One `/etc/passwd` line's fields that matter here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswdEntry {
    /// Login name.
    pub name: String,
    /// User id.
    pub uid: i64,
    /// Primary group id.
    pub gid: i64,
}

/// One `/etc/group` line's fields that matter here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupEntry {
    /// Group name.
    pub name: String,
    /// Group id.
    pub gid: i64,
    /// Member login names.
    pub members: Vec<String>,
}

/// The identity a process gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecUser {
    /// User id.
    pub uid: u32,
    /// Primary group id (the group of files it creates).
    pub gid: u32,
    /// Supplementary groups (only when the user was matched in passwd and no group was given).
    pub sgids: Vec<u32>,
    /// The passwd entry's name, when one matched.
    pub name: Option<String>,
}

/// Why a `User` cannot be resolved (the runtime refuses to start the process).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecUserError {
    /// A user name the passwd file does not list (or there is no passwd file).
    #[error("unable to find user {0}: no matching entries in passwd file")]
    NoUser(String),
    /// A group name the group file does not list (or there is no group file).
    #[error("unable to find group {0}: no matching entries in group file")]
    NoGroup(String),
    /// A numeric id out of range.
    #[error("uids and gids must be in range 0-2147483647 (got {0})")]
    Range(String),
}

const MAX_ID: i64 = (1 << 31) - 1;

/// Go's `strconv.Atoi` as runc uses it: the value, or `None` when it does not parse.
fn atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

fn lines(data: &[u8]) -> impl Iterator<Item = Vec<&str>> {
    data.split(|b| *b == b'\n').filter_map(|line| {
        let line = std::str::from_utf8(line).ok()?.trim();
        (!line.is_empty()).then(|| line.split(':').collect())
    })
}

/// Parses `/etc/passwd` (`name:password:uid:gid:gecos:home:shell`).
pub fn parse_passwd(data: &[u8]) -> Vec<PasswdEntry> {
    lines(data)
        .map(|f| PasswdEntry {
            name: f.first().copied().unwrap_or_default().to_string(),
            uid: f.get(2).and_then(|s| atoi(s)).unwrap_or(0),
            gid: f.get(3).and_then(|s| atoi(s)).unwrap_or(0),
        })
        .collect()
}

/// Parses `/etc/group` (`name:password:gid:member,member`).
pub fn parse_group(data: &[u8]) -> Vec<GroupEntry> {
    lines(data)
        .map(|f| GroupEntry {
            name: f.first().copied().unwrap_or_default().to_string(),
            gid: f.get(2).and_then(|s| atoi(s)).unwrap_or(0),
            members: f
                .get(3)
                .map(|m| {
                    m.split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

fn id(value: i64, text: &str) -> Result<u32, ExecUserError> {
    if (0..=MAX_ID).contains(&value) {
        Ok(value as u32)
    } else {
        Err(ExecUserError::Range(text.to_string()))
    }
}

/// Resolves an image config's `User` (`spec`; empty = root) against the image's `/etc/passwd`
/// and `/etc/group` contents (`None` when the file is absent), as runc does with defaults
/// uid 0, gid 0.
pub fn exec_user(
    spec: &str,
    passwd: Option<&[u8]>,
    group: Option<&[u8]>,
) -> Result<ExecUser, ExecUserError> {
    let (user_arg, group_arg) = match spec.split_once(':') {
        Some((u, g)) => (u, g.split(':').next().unwrap_or_default()),
        None => (spec, ""),
    };
    let uid_arg = atoi(user_arg);
    let gid_arg = atoi(group_arg);
    let users = passwd.map(parse_passwd).unwrap_or_default();
    let matched = users.into_iter().find(|u| {
        if user_arg.is_empty() {
            u.uid == 0
        } else if let Some(uid) = uid_arg {
            u.uid == uid
        } else {
            u.name == user_arg
        }
    });
    let mut out = ExecUser {
        uid: 0,
        gid: 0,
        sgids: Vec::new(),
        name: None,
    };
    match &matched {
        Some(u) => {
            out.uid = id(u.uid, user_arg)?;
            out.gid = id(u.gid, user_arg)?;
            out.name = Some(u.name.clone());
        }
        None if !user_arg.is_empty() => match uid_arg {
            Some(uid) => out.uid = id(uid, user_arg)?,
            None => return Err(ExecUserError::NoUser(user_arg.to_string())),
        },
        None => {}
    }
    if group_arg.is_empty() && out.name.is_none() {
        return Ok(out);
    }
    let groups = group.map(parse_group).unwrap_or_default();
    if group_arg.is_empty() {
        let name = out.name.clone().unwrap_or_default();
        for g in groups.iter().filter(|g| g.members.contains(&name)) {
            out.sgids.push(id(g.gid, &g.name)?);
        }
        return Ok(out);
    }
    let found = groups.iter().find(|g| match gid_arg {
        Some(gid) => g.gid == gid,
        None => g.name == group_arg,
    });
    out.gid = match (found, gid_arg) {
        (Some(g), _) => id(g.gid, group_arg)?,
        (None, Some(gid)) => id(gid, group_arg)?,
        (None, None) => return Err(ExecUserError::NoGroup(group_arg.to_string())),
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &[u8] = b"root:x:0:0:root:/root:/bin/sh\n\n  opm:x:1001:1001::/home/opm:/bin/sh  \nnobody:x:65534:65534::/:/sbin/nologin\nbad:x:zz:7::/:\n";
    const GROUP: &[u8] =
        b"root:x:0:\nopm:x:1001:\nwheel:x:10:opm,root\ndocker:x:999:opm\nnogroup:x:65534:\n";

    fn run(spec: &str) -> Result<(u32, u32, Vec<u32>), ExecUserError> {
        exec_user(spec, Some(PASSWD), Some(GROUP)).map(|u| (u.uid, u.gid, u.sgids))
    }

    #[test]
    fn docker_rules() {
        // Nothing named: root.
        assert_eq!(run("").unwrap(), (0, 0, vec![10]));
        // Numeric without an entry: group 0 (the opm image's case).
        assert_eq!(exec_user("1001", None, None).unwrap().gid, 0);
        assert_eq!(run("4242").unwrap(), (4242, 0, vec![]));
        // Numeric with an entry: its group, and its supplementary groups.
        assert_eq!(run("1001").unwrap(), (1001, 1001, vec![10, 999]));
        // By name.
        assert_eq!(run("opm").unwrap(), (1001, 1001, vec![10, 999]));
        assert_eq!(run("nobody").unwrap(), (65534, 65534, vec![]));
        // Explicit groups: by gid, by name, numeric unknown; no supplementary groups then.
        assert_eq!(run("1001:0").unwrap(), (1001, 0, vec![]));
        assert_eq!(run("opm:wheel").unwrap(), (1001, 10, vec![]));
        assert_eq!(run("4242:4343").unwrap(), (4242, 4343, vec![]));
        assert_eq!(exec_user("1001:1001", None, None).unwrap().gid, 1001);
        // A field that does not parse counts as 0.
        assert_eq!(run("bad").unwrap(), (0, 7, vec![]));
        // Refusals.
        assert_eq!(run("ghost"), Err(ExecUserError::NoUser("ghost".into())));
        assert!(exec_user("opm", None, None).is_err());
        assert_eq!(
            run("opm:ghosts"),
            Err(ExecUserError::NoGroup("ghosts".into()))
        );
        assert!(matches!(run("-1"), Err(ExecUserError::Range(_))));
        assert!(matches!(run("1:4294967296"), Err(ExecUserError::Range(_))));
    }
}
