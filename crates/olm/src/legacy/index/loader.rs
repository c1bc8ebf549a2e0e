//! A replay of opm's sqlite loader: the `add_*` methods insert rows as the loader's `INSERT`s do,
//! so a package-manifest folder fills the same tables a database file holds.

use super::tables::*;

impl IndexDb {
    /// An empty index (at the newest schema), to be filled with the `add_*` methods.
    pub fn new() -> IndexDb {
        IndexDb {
            schema_version: 13,
            ..IndexDb::default()
        }
    }

    /// `insert into package(name)` (and the default channel, `update package set
    /// default_channel`), as the loader does.
    pub fn add_package(&mut self, name: &str, default_channel: &str) {
        self.packages.push(PackageRow {
            name: name.to_string(),
            default_channel: default_channel.to_string(),
        });
    }

    /// `insert into channel(name, package_name, head_operatorbundle_name)`.
    pub fn add_channel(&mut self, package: &str, name: &str, head: &str) {
        self.channels.push(ChannelRow {
            name: name.to_string(),
            package_name: package.to_string(),
            head_operatorbundle_name: head.to_string(),
        });
    }

    /// `insert into channel_entry(channel_name, package_name, operatorbundle_name, depth)`;
    /// returns the new `entry_id` (SQLite's rowid rule: one more than the largest so far).
    pub fn add_channel_entry(
        &mut self,
        package: &str,
        channel: &str,
        bundle: &str,
        depth: i64,
    ) -> i64 {
        let entry_id = self
            .channel_entries
            .iter()
            .map(|e| e.entry_id)
            .max()
            .unwrap_or(0)
            + 1;
        self.channel_entries.push(ChannelEntryRow {
            entry_id,
            channel_name: Some(channel.to_string()),
            package_name: Some(package.to_string()),
            operatorbundle_name: Some(bundle.to_string()),
            replaces: None,
            depth: Some(depth),
        });
        entry_id
    }

    /// `update channel_entry set replaces = ? where entry_id = ?`.
    pub fn set_replaces(&mut self, entry_id: i64, replaced_entry_id: i64) {
        for e in &mut self.channel_entries {
            if e.entry_id == entry_id {
                e.replaces = Some(replaced_entry_id);
            }
        }
    }

    /// `insert into operatorbundle(...)`.
    pub fn add_bundle(&mut self, bundle: OperatorBundleRow) {
        self.bundles.push(bundle);
    }

    /// `insert into properties(type, value, operatorbundle_name, operatorbundle_version,
    /// operatorbundle_path)`, or the same into `dependencies` (the two tables have one shape).
    pub fn add_value(
        &mut self,
        table: ValueTable,
        bundle: &str,
        version: &str,
        path: &str,
        type_: &str,
        value: &str,
    ) {
        let rows = match table {
            ValueTable::Properties => &mut self.properties,
            ValueTable::Dependencies => &mut self.dependencies,
        };
        rows.push(BundleValueRow {
            type_: Some(type_.to_string()),
            value: Some(value.to_string()),
            operatorbundle_name: Some(bundle.to_string()),
            operatorbundle_version: Some(version.to_string()),
            operatorbundle_path: Some(path.to_string()),
        });
    }

    /// `insert into related_image(image, operatorbundle_name)`.
    pub fn add_related_image(&mut self, bundle: &str, image: &str) {
        self.related_images.push(RelatedImageRow {
            image: Some(image.to_string()),
            operatorbundle_name: Some(bundle.to_string()),
        });
    }

    /// The bundle row named `name`, if any.
    pub fn bundle(&self, name: &str) -> Option<&OperatorBundleRow> {
        self.bundles.iter().find(|b| b.name == name)
    }
}
