//! The admit step: every image a command reads passes the signature policy first, and the read
//! uses the location the check pinned to the verified digest (never the tag again).

use crate::location::Location;
use crate::signature::lookaside::RegistriesD;
use crate::transport::RegistryOptions;

/// Why an image may not be read under the signature policy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyCheckError {
    /// The policy refuses the image (the command exits 1).
    #[error("{0}")]
    Refused(String),
    /// The policy or the stores could not be read (exit 2): the signature library's error,
    /// causes included, rendered by the door.
    #[error(transparent)]
    Setup(Box<dyn std::error::Error + Send + Sync>),
}

/// A signature policy loaded once for a run (the policy file, and the lookaside stores from
/// `$OLMPACK_REGISTRIES_D` or the default registries.d), through which every image a command
/// reads passes first: a command that reads several images (`catalog mirror`: the catalog, its
/// bundles and operand images, `--base`) checks each with the same policy.
#[derive(Debug, Clone)]
pub struct PolicyGate {
    policy: crate::signature::policy::Policy,
    registries_d: RegistriesD,
}

impl PolicyGate {
    /// The policy `policy` names (`default`, a file, or `$OLMPACK_POLICY`); `None` when none is
    /// given, and then images are read without a check.
    pub fn load(policy: Option<&str>) -> Result<Option<PolicyGate>, PolicyCheckError> {
        use crate::signature::policy::Policy;
        fn setup(e: impl std::error::Error + Send + Sync + 'static) -> PolicyCheckError {
            PolicyCheckError::Setup(Box::new(e))
        }
        let Some(path) = Policy::locate(policy).map_err(setup)? else {
            return Ok(None);
        };
        let policy = Policy::load(&path).map_err(setup)?;
        let rd_dir = std::env::var_os("OLMPACK_REGISTRIES_D").map(std::path::PathBuf::from);
        let registries_d =
            RegistriesD::load(&RegistriesD::default_dir(rd_dir.as_deref())).map_err(setup)?;
        Ok(Some(PolicyGate {
            policy,
            registries_d,
        }))
    }

    /// Checks `location` and gives back the location to read: pinned to the manifest digest
    /// whose signatures were verified ([`Location::pinned`]), so the read cannot be served
    /// another manifest than the one checked. Folders are not images and pass as they are.
    pub fn admit(
        &self,
        location: &Location,
        registry: &RegistryOptions,
    ) -> Result<Location, PolicyCheckError> {
        use crate::signature::policy::PolicyError;
        if matches!(location.place(), crate::location::Place::Path(_)) {
            return Ok(location.clone());
        }
        match self.policy.check(location, registry, &self.registries_d) {
            Ok(Some(digest)) => Ok(location.pinned(&digest)),
            Ok(None) => Ok(location.clone()),
            Err(PolicyError::Refused(r)) => Err(PolicyCheckError::Refused(r.to_string())),
            Err(e) => Err(PolicyCheckError::Setup(Box::new(e))),
        }
    }
}

/// Checks `location` against the containers policy `policy` names (`default`, a file, or
/// `$OLMPACK_POLICY`; nothing when none is found) and gives back the location to read, pinned
/// to the verified digest ([`PolicyGate::admit`]); registry references and local images are
/// checked, folders are not images and pass. Lookaside stores come from
/// `$OLMPACK_REGISTRIES_D` or the default registries.d.
pub fn check_policy(
    policy: Option<&str>,
    location: &Location,
    registry: &RegistryOptions,
) -> Result<Location, PolicyCheckError> {
    match PolicyGate::load(policy)? {
        Some(gate) => gate.admit(location, registry),
        None => Ok(location.clone()),
    }
}
