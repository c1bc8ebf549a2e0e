//! A typed view over a ClusterServiceVersion as the bundle loader parsed it: the parts every
//! consumer reads (install modes, deployments, permissions, webhooks, owned and required CRDs and
//! APIs, related images, annotations) as small structs that borrow the positioned YAML, so every
//! value still knows its file and line. Why a view and not a deserialized struct: rules must report
//! where a field is (or where it should have been) and must see values as written (`1.0` vs
//! `"1.0"`), and the renderer needs the raw subtree to decode it as Kubernetes' Go types would.

use crate::bundle::Object;
use crate::yaml::Node;

/// Where a field of the CSV is: the CSV's file and a 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos<'a> {
    /// File relative to the bundle root.
    pub file: &'a str,
    /// 1-based line.
    pub line: usize,
}

/// One `spec.installModes[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallMode<'a> {
    /// `type` (`OwnNamespace`, `SingleNamespace`, `MultiNamespace`, `AllNamespaces`), as written.
    pub mode: &'a str,
    /// `supported` (false when absent or not a boolean).
    pub supported: bool,
    /// Where the entry is.
    pub pos: Pos<'a>,
}

/// One `spec.install.spec.deployments[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment<'a> {
    /// `name` (empty when absent).
    pub name: &'a str,
    /// `spec`, a DeploymentSpec.
    pub spec: Option<&'a Node>,
    /// `label`, the labels OLM puts on the Deployment.
    pub label: Option<&'a Node>,
    /// The entry itself.
    pub node: &'a Node,
    /// Where the entry is.
    pub pos: Pos<'a>,
}

/// One `permissions[]` or `clusterPermissions[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Permission<'a> {
    /// `serviceAccountName` (empty when absent: Kubernetes' `default`).
    pub service_account: &'a str,
    /// `rules`, a list of PolicyRules.
    pub rules: Option<&'a Node>,
    /// Whether it came from `clusterPermissions`.
    pub cluster: bool,
    /// The entry itself.
    pub node: &'a Node,
    /// Where the entry is.
    pub pos: Pos<'a>,
}

/// One `spec.webhookdefinitions[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook<'a> {
    /// `type`: `ValidatingAdmissionWebhook`, `MutatingAdmissionWebhook` or `ConversionWebhook`.
    pub kind: &'a str,
    /// `generateName`.
    pub generate_name: &'a str,
    /// `deploymentName`.
    pub deployment: &'a str,
    /// `conversionCRDs`.
    pub conversion_crds: Vec<&'a str>,
    /// The entry itself.
    pub node: &'a Node,
    /// Where the entry is.
    pub pos: Pos<'a>,
}

/// One owned or required CRD or API description.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiDescription<'a> {
    /// `name` (`plural.group` for CRDs; empty for APIs).
    pub name: &'a str,
    /// `group` (APIs) or the part of `name` after the first dot (CRDs).
    pub group: &'a str,
    /// `group` as written, `None` when the entry has none: an API description must name its
    /// group, a CRD description names it only inside `name` (`plural.group`).
    pub written_group: Option<&'a str>,
    /// `version`.
    pub version: &'a str,
    /// `kind`.
    pub kind: &'a str,
    /// The entry as written (for rules that must tell a missing field from an empty one).
    pub node: &'a Node,
    /// Where the entry is.
    pub pos: Pos<'a>,
}

/// One `spec.relatedImages[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct RelatedImage<'a> {
    /// `name`.
    pub name: &'a str,
    /// `image`.
    pub image: &'a str,
    /// Where the entry is.
    pub pos: Pos<'a>,
}

/// The typed view of one CSV object.
#[derive(Debug, Clone, Copy)]
pub struct Csv<'a> {
    /// The CSV object (file, document, root node).
    pub object: &'a Object,
}

fn text(node: Option<&Node>) -> &str {
    node.and_then(Node::scalar_text).unwrap_or("")
}

fn items(node: Option<&Node>) -> &[Node] {
    node.and_then(Node::as_seq).unwrap_or(&[])
}

impl<'a> Csv<'a> {
    /// A view of `object`; `None` when it is not a ClusterServiceVersion.
    pub fn new(object: &'a Object) -> Option<Csv<'a>> {
        object.is_csv().then_some(Csv { object })
    }

    fn pos(&self, node: &Node) -> Pos<'a> {
        Pos {
            file: &self.object.file,
            line: node.line,
        }
    }

    /// Where a field is, or the CSV's own line when absent.
    pub fn pos_of(&self, path: &[&str]) -> Pos<'a> {
        Pos {
            file: &self.object.file,
            line: self.object.line_of(path),
        }
    }

    /// `metadata.name` (empty when absent).
    pub fn name(&self) -> &'a str {
        self.object.name.as_deref().unwrap_or("")
    }

    /// `spec`, when present.
    pub fn spec(&self) -> Option<&'a Node> {
        self.object.root.get("spec")
    }

    /// `metadata.annotations` entries in file order, each with its value node.
    pub fn annotations(&self) -> Vec<(&'a str, &'a Node)> {
        self.object
            .root
            .path(&["metadata", "annotations"])
            .and_then(Node::as_map)
            .unwrap_or(&[])
            .iter()
            .map(|(k, v)| (k.text.as_str(), v))
            .collect()
    }

    /// One annotation's text, when set to a scalar.
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.object
            .root
            .path(&["metadata", "annotations", key])
            .and_then(Node::scalar_text)
    }

    /// `spec.installModes` in file order.
    pub fn install_modes(&self) -> Vec<InstallMode<'a>> {
        items(self.spec().and_then(|s| s.get("installModes")))
            .iter()
            .map(|m| InstallMode {
                mode: text(m.get("type")),
                supported: m.get("supported").and_then(Node::as_bool).unwrap_or(false),
                pos: self.pos(m),
            })
            .collect()
    }

    /// The install modes marked supported, sorted and without duplicates (how OLM v1 lists them
    /// in its messages).
    pub fn supported_modes(&self) -> Vec<&'a str> {
        let mut modes: Vec<&str> = self
            .install_modes()
            .into_iter()
            .filter(|m| m.supported)
            .map(|m| m.mode)
            .collect();
        modes.sort_unstable();
        modes.dedup();
        modes
    }

    /// `spec.install.strategy`, the install strategy's name (`deployment` is the only one OLM
    /// knows), when set to a scalar.
    pub fn strategy_name(&self) -> Option<&'a str> {
        self.spec()
            .and_then(|s| s.path(&["install", "strategy"]))
            .and_then(Node::scalar_text)
    }

    /// `spec.install.spec`, the deployment strategy's details.
    pub fn strategy(&self) -> Option<&'a Node> {
        self.spec().and_then(|s| s.path(&["install", "spec"]))
    }

    /// `spec.install.spec.deployments` in file order.
    pub fn deployments(&self) -> Vec<Deployment<'a>> {
        items(self.strategy().and_then(|s| s.get("deployments")))
            .iter()
            .map(|d| Deployment {
                name: text(d.get("name")),
                spec: d.get("spec"),
                label: d.get("label"),
                node: d,
                pos: self.pos(d),
            })
            .collect()
    }

    fn permissions_of(&self, key: &str, cluster: bool) -> Vec<Permission<'a>> {
        items(self.strategy().and_then(|s| s.get(key)))
            .iter()
            .map(|p| Permission {
                service_account: text(p.get("serviceAccountName")),
                rules: p.get("rules"),
                cluster,
                node: p,
                pos: self.pos(p),
            })
            .collect()
    }

    /// `spec.install.spec.permissions` (namespaced rules) in file order.
    pub fn permissions(&self) -> Vec<Permission<'a>> {
        self.permissions_of("permissions", false)
    }

    /// `spec.install.spec.clusterPermissions` in file order.
    pub fn cluster_permissions(&self) -> Vec<Permission<'a>> {
        self.permissions_of("clusterPermissions", true)
    }

    /// `spec.webhookdefinitions` in file order.
    pub fn webhooks(&self) -> Vec<Webhook<'a>> {
        items(self.spec().and_then(|s| s.get("webhookdefinitions")))
            .iter()
            .map(|w| Webhook {
                kind: text(w.get("type")),
                generate_name: text(w.get("generateName")),
                deployment: text(w.get("deploymentName")),
                conversion_crds: items(w.get("conversionCRDs"))
                    .iter()
                    .map(|c| text(Some(c)))
                    .collect(),
                node: w,
                pos: self.pos(w),
            })
            .collect()
    }

    fn descriptions(&self, path: &[&str]) -> Vec<ApiDescription<'a>> {
        items(self.spec().and_then(|s| s.path(path)))
            .iter()
            .map(|d| {
                let name = text(d.get("name"));
                let written_group = d.get("group").map(|g| text(Some(g)));
                let group =
                    written_group.unwrap_or_else(|| name.split_once('.').map_or("", |(_, g)| g));
                ApiDescription {
                    name,
                    group,
                    written_group,
                    version: text(d.get("version")),
                    kind: text(d.get("kind")),
                    node: d,
                    pos: self.pos(d),
                }
            })
            .collect()
    }

    /// `spec.customresourcedefinitions.owned`.
    pub fn owned_crds(&self) -> Vec<ApiDescription<'a>> {
        self.descriptions(&["customresourcedefinitions", "owned"])
    }

    /// `spec.customresourcedefinitions.required`.
    pub fn required_crds(&self) -> Vec<ApiDescription<'a>> {
        self.descriptions(&["customresourcedefinitions", "required"])
    }

    /// `spec.apiservicedefinitions.owned`.
    pub fn owned_apis(&self) -> Vec<ApiDescription<'a>> {
        self.descriptions(&["apiservicedefinitions", "owned"])
    }

    /// `spec.apiservicedefinitions.required`.
    pub fn required_apis(&self) -> Vec<ApiDescription<'a>> {
        self.descriptions(&["apiservicedefinitions", "required"])
    }

    /// `spec.relatedImages` in file order.
    pub fn related_images(&self) -> Vec<RelatedImage<'a>> {
        items(self.spec().and_then(|s| s.get("relatedImages")))
            .iter()
            .map(|r| RelatedImage {
                name: text(r.get("name")),
                image: text(r.get("image")),
                pos: self.pos(r),
            })
            .collect()
    }
}
