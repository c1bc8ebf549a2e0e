//! `olmpack catalog query SOURCE`: what a catalog offers and what OLM v1 installs from it, as a
//! table or JSON, from a folder, an image, or a running catalogd / `catalog serve --http` URL.

use super::flags::RegistryArgs;
use super::{EXIT_OK, Failure, Outcome, error_chain};
use crate::action::Location;
use crate::action::catalog_query::{self, Answer, Installable, QueryOptions};
use std::io::Write;

/// Arguments of `olmpack catalog query`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A catalog folder, a catalog image (registry, oci:, oci-archive:, docker-archive:), or the
    /// URL of a catalog on catalogd or `olmpack catalog serve --http`
    /// (http://HOST:PORT/catalogs/NAME).
    #[arg(value_name = "SOURCE")]
    pub source: String,
    /// Only this package.
    #[arg(long, value_name = "PACKAGE")]
    pub package: Option<String>,
    /// Only bundles OLM v1 installs today (`olmv1`): AllNamespaces, no dependencies, supported
    /// kinds, no owned APIServices. Bundles needing the alpha SingleOwnNamespaceInstallSupport
    /// gate are left out.
    #[arg(long, value_name = "OLM", value_parser = ["olmv1"])]
    pub installable: Option<String>,
    /// The installed version (or bundle name): where OLM v1 and OLM v0 upgrade it, per channel.
    #[arg(long, value_name = "VERSION")]
    pub upgrades_from: Option<String>,
    /// Also list every channel and installed version where OLM v0 and OLM v1 upgrade
    /// differently (or one of them not at all).
    #[arg(long)]
    pub upgrade_report: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Format,
    /// Registry connection flags for an image SOURCE.
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Output formats of `catalog query`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// A table per package.
    Text,
    /// One JSON document.
    Json,
}

/// Runs `catalog query`.
pub fn run(args: &Args) -> Outcome {
    let url = catalog_query::is_url(&args.source);
    let location = if url {
        None
    } else {
        Some(Location::parse(&args.source).map_err(|e| Failure::usage(e.to_string()))?)
    };
    let registry = match &location {
        Some(l) if !l.is_local() => args.registry.options(&[&args.source])?,
        // A catalogd URL: the TLS options (--ca-file, --insecure) apply, credentials do not.
        None => catalog_query::url_options(
            args.registry.connection.ca_file.clone(),
            args.registry.connection.insecure,
        ),
        _ => Default::default(),
    };
    let query = QueryOptions {
        package: args.package.clone(),
        installable: args.installable.is_some(),
        upgrades_from: args.upgrades_from.clone(),
    };
    let answer = catalog_query::query(
        &args.source,
        location.as_ref(),
        &registry,
        &query,
        args.upgrade_report,
    )
    .map_err(|e| Failure::usage(error_chain(&e)))?;
    // A URL's user-info (`https://user:password@…`) is never printed.
    let shown = if url {
        catalog_query::shown_url(&args.source)
    } else {
        args.source.clone()
    };
    if answer.packages.is_empty() && args.package.is_some() {
        return Err(Failure::usage(format!(
            "{shown}: no package {:?}",
            args.package.as_deref().unwrap_or("")
        )));
    }
    if let (Some(v), Some(p)) = (&args.upgrades_from, &args.package)
        && answer.packages.iter().all(|q| q.upgrades.is_empty())
    {
        return Err(Failure::usage(format!(
            "{shown}: package {p:?} has no bundle with version or name {v:?} in any channel"
        )));
    }
    let text = match args.output {
        Format::Json => {
            serde_json::to_string_pretty(&answer)
                .map_err(|e| Failure::usage(format!("cannot encode the answer: {e}")))?
                + "\n"
        }
        Format::Text => table(&answer),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| Failure::usage(format!("cannot write to standard output: {e}")))?;
    Ok(EXIT_OK)
}

fn state(i: Installable) -> &'static str {
    match i {
        Installable::Yes => "yes",
        Installable::AlphaGate => "alpha-gate",
        Installable::No => "no",
        Installable::Unknown => "unknown",
    }
}

fn table(a: &Answer) -> String {
    let mut out = String::new();
    for p in &a.packages {
        out.push_str(&format!(
            "{} (default channel {})\n",
            p.name, p.default_channel
        ));
        for c in &p.channels {
            out.push_str(&format!(
                "  channel {:<20} head {:<40} {} entries\n",
                c.name,
                c.head,
                c.entries.len()
            ));
        }
        out.push_str(&format!(
            "  {:<50} {:<16} {:<11} CHANNELS\n",
            "BUNDLE", "VERSION", "OLM V1"
        ));
        for b in &p.bundles {
            out.push_str(&format!(
                "  {:<50} {:<16} {:<11} {}\n",
                b.name,
                b.version,
                state(b.olmv1),
                b.channels.join(",")
            ));
        }
        if !p.upgrades.is_empty() {
            out.push_str(&format!(
                "  {:<20} {:<40} {:<40} {}\n",
                "CHANNEL", "FROM", "OLM V1", "OLM V0"
            ));
            for u in &p.upgrades {
                let (v1, v0) = (or_none(&u.v1), or_none(&u.v0));
                out.push_str(&format!(
                    "  {:<20} {:<40} {v1:<40} {v0}\n",
                    u.channel, u.installed
                ));
            }
        }
    }
    if let Some(diffs) = &a.differences {
        out.push_str(&format!(
            "OLM v0 and OLM v1 upgrade differently: {} case(s)\n",
            diffs.len()
        ));
        for (pkg, u) in diffs {
            let (v1, v0) = (or_none(&u.v1), or_none(&u.v0));
            out.push_str(&format!(
                "  {pkg} channel {}: from {} OLM v1 -> {v1}, OLM v0 -> {v0}\n",
                u.channel, u.installed
            ));
        }
    }
    out
}

/// An upgrade's target as printed: the bundle's name, or `(none)` where that OLM stays put.
fn or_none(target: &Option<String>) -> &str {
    target.as_deref().unwrap_or("(none)")
}
