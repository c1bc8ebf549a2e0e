//! Who owns opm's serve cache in a catalog image, and who can read it.
//!
//! Why: `opm generate dockerfile` images get their cache from `RUN opm serve … --cache-only` in
//! a base that runs as its own user (the opm image: `USER 1001`), so the cache belongs to that
//! user. With folders 0750 and files 0640 (the modes opm writes and hashes), a cache owned by
//! anyone else is readable only through its group: a cache owned `0:0` works for uid 1001 only
//! while the process happens to be in group 0, and a pod given its own group (`runAsGroup`, or a
//! base whose `/etc/passwd` gives the user a group) dies at start with `permission denied`.
//! olmpack writes the cache itself, so it owns it as that `RUN` would have: the base config's
//! `User` resolved with runc's rules ([`crate::gocompat::execuser`]) against the base image's
//! own `/etc/passwd` and `/etc/group`. The digest is unchanged (opm zeroes uid and gid).

use crate::gocompat::execuser::{ExecUser, ExecUserError, exec_user};
use crate::transport::OpenedImage;
use crate::transport::TransportError;

/// The owner of every entry of a cache layer, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheOwner {
    /// User id.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
    /// Where it comes from (the base's `User`, its passwd entry), for the build's output.
    pub reason: String,
}

impl CacheOwner {
    /// Root, for an image with no user (scratch, or a base that names none).
    pub fn root(reason: &str) -> Self {
        CacheOwner {
            uid: 0,
            gid: 0,
            reason: reason.to_string(),
        }
    }
}

/// Why the owner could not be found.
#[derive(Debug, thiserror::Error)]
pub enum OwnerError {
    /// The base's `User` cannot be resolved: a container runtime would refuse to run it too.
    #[error("the base runs as User {user:?}, which a container runtime cannot resolve: {source}")]
    User {
        /// The config's `User`.
        user: String,
        /// Why.
        #[source]
        source: ExecUserError,
    },
    /// The base's layers could not be read.
    #[error("cannot read /etc/passwd and /etc/group from the base's layers: {0}")]
    Layers(#[from] TransportError),
}

/// An image's `/etc/passwd` and `/etc/group` (`None`: absent, deleted, or not a regular file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFiles {
    /// `/etc/passwd`.
    pub passwd: Option<Vec<u8>>,
    /// `/etc/group`.
    pub group: Option<Vec<u8>>,
}

/// Largest `/etc/passwd` or `/etc/group` read (real ones are a few KiB).
const USER_FILE_CAP: u64 = 4 << 20;

/// Reads `/etc/passwd` (when `passwd`) and `/etc/group` (when `group`) of `image` from its
/// layers, the top layer first (the first layer that holds a file, or deletes it with a
/// whiteout, decides), so only the layers above the answer are read.
pub fn user_files(
    image: &OpenedImage,
    passwd: bool,
    group: bool,
) -> Result<UserFiles, TransportError> {
    const NAMES: [&str; 2] = ["etc/passwd", "etc/group"];
    let mut found: [Option<Option<Vec<u8>>>; 2] =
        [(!passwd).then_some(None), (!group).then_some(None)];
    for i in (0..image.layer_descriptors().len()).rev() {
        if found.iter().all(Option::is_some) {
            break;
        }
        let (entries, mut captured) =
            image.list_layer(i, &|p| NAMES.contains(&p), USER_FILE_CAP)?;
        for (slot, name) in found.iter_mut().zip(NAMES) {
            if slot.is_some() {
                continue;
            }
            if let Some(bytes) = captured.remove(name) {
                *slot = Some(Some(bytes));
                continue;
            }
            let file = name.trim_start_matches("etc/");
            let decided = entries.iter().any(|e| {
                let p = e.path.trim_end_matches('/');
                p == name
                    || p == format!("etc/.wh.{file}")
                    || p == "etc/.wh..wh..opq"
                    || p == ".wh.etc"
                    || (p == "etc" && e.kind != "dir")
            });
            if decided {
                *slot = Some(None);
            }
        }
    }
    let [p, g] = found;
    Ok(UserFiles {
        passwd: p.flatten(),
        group: g.flatten(),
    })
}

/// The config `User` of an image (empty when none).
pub fn config_user(config: &serde_json::Value) -> String {
    config
        .pointer("/config/User")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The owner a cache written by `RUN` in `base` gets: the base's `User` as runc resolves it
/// (reading only the files that answer needs), root when it names no user.
pub fn base_cache_owner(base: &OpenedImage) -> Result<CacheOwner, OwnerError> {
    let user = config_user(&base.config_json());
    if user.is_empty() {
        return Ok(CacheOwner::root("the base names no user, so root"));
    }
    let (u, g) = user.split_once(':').unwrap_or((user.as_str(), ""));
    // A numeric uid with a group needs no passwd; only a group name needs /etc/group.
    let need_passwd = !is_number(u) || g.is_empty();
    let need_group = !g.is_empty() && !is_number(g);
    let files = user_files(base, need_passwd, need_group)?;
    let resolved =
        exec_user(&user, files.passwd.as_deref(), files.group.as_deref()).map_err(|source| {
            OwnerError::User {
                user: user.clone(),
                source,
            }
        })?;
    let how = if !g.is_empty() {
        String::new()
    } else if let Some(name) = &resolved.name {
        format!(", {name} in its /etc/passwd with group {}", resolved.gid)
    } else {
        ", which its /etc/passwd does not list, so group 0".to_string()
    };
    Ok(CacheOwner {
        uid: resolved.uid,
        gid: resolved.gid,
        reason: format!("as RUN in the base would: its User {user:?}{how}"),
    })
}

/// Through what a process reads (or traverses) a file or folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// uid 0: permission bits do not apply.
    Root,
    /// The owner bits.
    Owner,
    /// The group bits, as a member of the entry's group (`gid`).
    Group(u32),
    /// The bits for others.
    Other,
    /// Refused (the class that applies lacks read, or execute on a folder).
    Denied,
}

/// How `user` reaches an entry owned `uid:gid` with `mode` (folders need read and execute),
/// with the kernel's rule: the first class that applies decides, even when it grants less.
pub fn access(uid: u32, gid: u32, mode: u32, dir: bool, user: &ExecUser) -> Access {
    if user.uid == 0 {
        return Access::Root;
    }
    let need = if dir { 0o5 } else { 0o4 };
    let (bits, class) = if uid == user.uid {
        (mode >> 6, Access::Owner)
    } else if gid == user.gid || user.sgids.contains(&gid) {
        (mode >> 3, Access::Group(gid))
    } else {
        (mode, Access::Other)
    };
    if bits & need == need {
        class
    } else {
        Access::Denied
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(uid: u32, gid: u32) -> ExecUser {
        ExecUser {
            uid,
            gid,
            sgids: Vec::new(),
            name: None,
        }
    }

    #[test]
    fn access_follows_the_first_class() {
        assert_eq!(access(0, 0, 0o640, false, &user(1001, 0)), Access::Group(0));
        assert_eq!(access(0, 0, 0o750, true, &user(1001, 1001)), Access::Denied);
        assert_eq!(
            access(1001, 0, 0o640, false, &user(1001, 1001)),
            Access::Owner
        );
        assert_eq!(
            access(1001, 0, 0o640, false, &user(5000, 0)),
            Access::Group(0)
        );
        assert_eq!(
            access(1001, 1001, 0o750, true, &user(5000, 0)),
            Access::Denied
        );
        assert_eq!(
            access(1001, 1001, 0o755, true, &user(5000, 0)),
            Access::Other
        );
        // The owner class decides even when the group would allow more.
        assert_eq!(
            access(1001, 0, 0o040, false, &user(1001, 0)),
            Access::Denied
        );
        assert_eq!(access(7, 7, 0, true, &user(0, 0)), Access::Root);
    }
}
