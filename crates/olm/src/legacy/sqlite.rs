//! Reading an index database (`/database/index.db` of sqlite-based index images) into the
//! [`IndexDb`] model, without ever writing to it.
//!
//! Why not simply do what opm does: `opm render index.db` first runs the schema migrations on
//! the file it was given, i.e. it rewrites the user's database (LEGACY.md D). Here the file is
//! opened read-only *and* `immutable=1` (no lock, no journal, no WAL, no shared-memory file),
//! and the migrations that change what opm then reads are applied to the rows in memory:
//!
//! - before schema 6, `api_provider`/`api_requirer` pointed at channel entries; migration 006
//!   re-keys them by bundle (the same join is run here, as a plain `SELECT`);
//! - before schema 8 there is no `dependencies`; migration 008 fills it with one `olm.gvk`
//!   per required API (values with a `type` key);
//! - before schema 9 there is no `properties`; migration 009 fills it with an `olm.package`
//!   and the `olm.gvk`s of every bundle that provides an API, then rewrites every dependency
//!   value with a correlated-subquery slip: each row gets the first row's value minus `type`.
//!   That slip is reproduced, since it is what opm renders.
//!
//! Migrations 000–005, 007 and 010–013 change nothing the conversion reads, except that 002 and
//! 005 add `bundlepath` and `version` as `NULL` columns (005 means to backfill `version` but
//! inserts new rows instead of updating), so on a database older than schema 5 every bundle
//! is hidden and opm's validation refuses the index; that outcome is reproduced, not improved.

use super::index::{
    ApiBundleRow, ApiRow, BundleValueRow, ChannelEntryRow, ChannelRow, IndexDb, OperatorBundleRow,
    PackageRow, RelatedImageRow, ValueTable,
};
use crate::catalog::model::property_type;
use crate::gocompat::marshal::write_str;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The first 16 bytes of every SQLite 3 database file.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Label of an index image naming the database inside it (opm's `DbLocationLabel`).
pub const DATABASE_LABEL: &str = "operators.operatorframework.io.index.database.v1";

/// The newest schema version opm wrote (migration 013).
pub const NEWEST_SCHEMA: i64 = 13;

/// Tables without which a database is not an index.
const REQUIRED_TABLES: [&str; 4] = ["package", "channel", "channel_entry", "operatorbundle"];

/// Why a database could not be read; always names the file.
#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    /// The file could not be opened or read at all.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
    /// The file is not an SQLite database, or is damaged (truncated, corrupt).
    #[error("{}: not a readable SQLite database: {message}", path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the header check said.
        message: String,
    },
    /// A valid SQLite database that is not an operator index.
    #[error(
        "{}: not an operator index database (no {} table{}); expected the /database/index.db of an sqlite-based index image",
        path.display(),
        missing.join(", "),
        if missing.len() > 1 { "s" } else { "" }
    )]
    NotAnIndex {
        /// The database file.
        path: PathBuf,
        /// The index tables it lacks.
        missing: Vec<String>,
    },
    /// A schema newer than any opm wrote.
    #[error(
        "{}: index schema version {version} is newer than the newest opm wrote ({NEWEST_SCHEMA})",
        path.display()
    )]
    UnknownSchema {
        /// The database file.
        path: PathBuf,
        /// Its `schema_migrations.version`.
        version: i64,
    },
    /// The index could not be converted (opm would refuse it too).
    #[error("{}: {source}", path.display())]
    Convert {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: super::index::ConvertError,
    },
}

/// Whether `path` is a regular file starting with the SQLite header: how `catalog render`
/// tells a database from the other file arguments (opm checks the same magic bytes).
pub fn is_sqlite_file(path: &Path) -> bool {
    let mut head = [0u8; 16];
    match std::fs::File::open(path) {
        Ok(mut f) => f.read_exact(&mut head).is_ok() && &head == SQLITE_MAGIC,
        Err(_) => false,
    }
}

/// Reads and converts: the catalog `opm render` prints for the database at `path`, before
/// render's post-processing, with bundle objects in the order of the opm release `compat`
/// names (see [`IndexDb::render_as`]).
pub fn render_database(
    path: &Path,
    compat: Option<crate::catalog::OpmCompat>,
) -> Result<crate::catalog::model::DeclarativeConfig, SqliteError> {
    let db = read_index(path)?;
    db.render_as(compat).map_err(|source| SqliteError::Convert {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads every table of the index database at `path` (any schema opm wrote, 0 to 13) into an
/// [`IndexDb`] at the newest schema, without modifying the file.
pub fn read_index(path: &Path) -> Result<IndexDb, SqliteError> {
    check_header(path)?;
    let conn = open_read_only(path)?;
    let corrupt = |e: rusqlite::Error| SqliteError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let tables = table_columns(&conn).map_err(corrupt)?;
    let missing: Vec<String> = REQUIRED_TABLES
        .iter()
        .filter(|t| !tables.contains_key(**t))
        .map(|t| t.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(SqliteError::NotAnIndex {
            path: path.to_path_buf(),
            missing,
        });
    }
    let version = schema_version(&conn, &tables).map_err(corrupt)?;
    if version > NEWEST_SCHEMA {
        return Err(SqliteError::UnknownSchema {
            path: path.to_path_buf(),
            version,
        });
    }
    let reader = Reader {
        conn: &conn,
        tables: &tables,
    };
    let mut db = IndexDb {
        schema_version: version,
        ..IndexDb::default()
    };
    db.packages = reader
        .rows("package", &["name", "default_channel"], |r| PackageRow {
            name: text(r[0]).unwrap_or_default(),
            default_channel: text(r[1]).unwrap_or_default(),
        })
        .map_err(corrupt)?;
    db.channels = reader
        .rows(
            "channel",
            &["name", "package_name", "head_operatorbundle_name"],
            |r| ChannelRow {
                name: text(r[0]).unwrap_or_default(),
                package_name: text(r[1]).unwrap_or_default(),
                head_operatorbundle_name: text(r[2]).unwrap_or_default(),
            },
        )
        .map_err(corrupt)?;
    db.channel_entries = reader
        .rows(
            "channel_entry",
            &[
                "entry_id",
                "channel_name",
                "package_name",
                "operatorbundle_name",
                "replaces",
                "depth",
            ],
            |r| ChannelEntryRow {
                entry_id: int(r[0]).unwrap_or_default(),
                channel_name: text(r[1]),
                package_name: text(r[2]),
                operatorbundle_name: text(r[3]),
                replaces: int(r[4]),
                depth: int(r[5]),
            },
        )
        .map_err(corrupt)?;
    db.bundles = reader
        .rows(
            "operatorbundle",
            &[
                "name",
                "csv",
                "bundle",
                "bundlepath",
                "skiprange",
                "version",
                "replaces",
                "skips",
                "substitutesfor",
            ],
            |r| OperatorBundleRow {
                name: text(r[0]).unwrap_or_default(),
                csv: text(r[1]),
                bundle: text(r[2]),
                bundlepath: text(r[3]),
                skiprange: text(r[4]),
                version: text(r[5]),
                replaces: text(r[6]),
                skips: text(r[7]),
                substitutesfor: text(r[8]),
            },
        )
        .map_err(corrupt)?;
    let value_columns = [
        "type",
        "value",
        "operatorbundle_name",
        "operatorbundle_version",
        "operatorbundle_path",
    ];
    let value_row = |r: &[ValueRef<'_>]| BundleValueRow {
        type_: text(r[0]),
        value: text(r[1]),
        operatorbundle_name: text(r[2]),
        operatorbundle_version: text(r[3]),
        operatorbundle_path: text(r[4]),
    };
    db.properties = reader
        .rows("properties", &value_columns, value_row)
        .map_err(corrupt)?;
    db.dependencies = reader
        .rows("dependencies", &value_columns, value_row)
        .map_err(corrupt)?;
    db.related_images = reader
        .rows("related_image", &["image", "operatorbundle_name"], |r| {
            RelatedImageRow {
                image: text(r[0]),
                operatorbundle_name: text(r[1]),
            }
        })
        .map_err(corrupt)?;
    db.deprecated = reader
        .rows("deprecated", &["operatorbundle_name"], |r| {
            text(r[0]).unwrap_or_default()
        })
        .map_err(corrupt)?;
    db.apis = reader
        .rows("api", &["group_name", "version", "kind", "plural"], |r| {
            ApiRow {
                group_name: text(r[0]).unwrap_or_default(),
                version: text(r[1]).unwrap_or_default(),
                kind: text(r[2]).unwrap_or_default(),
                plural: text(r[3]).unwrap_or_default(),
            }
        })
        .map_err(corrupt)?;
    db.api_providers = reader.api_rows("api_provider", version).map_err(corrupt)?;
    db.api_requirers = reader.api_rows("api_requirer", version).map_err(corrupt)?;
    migrate_in_memory(&mut db, version);
    Ok(db)
}

/// The checks SQLite itself does lazily, done first so a damaged file gets one clear message:
/// the magic bytes, and a file no shorter than the page count its header records.
fn check_header(path: &Path) -> Result<(), SqliteError> {
    let io = |e: std::io::Error| SqliteError::from(crate::fsio::at("read", path)(e));
    let corrupt = |message: String| SqliteError::Corrupt {
        path: path.to_path_buf(),
        message,
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let mut head = [0u8; 100];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]).map_err(io)? {
            0 => break,
            n => got += n,
        }
    }
    if got < 16 || &head[..16] != SQLITE_MAGIC {
        return Err(corrupt(
            "the file does not start with the SQLite header (\"SQLite format 3\")".into(),
        ));
    }
    if got < 100 {
        return Err(corrupt(format!(
            "truncated: {len} bytes, shorter than the 100-byte SQLite header"
        )));
    }
    let page_size = match u16::from_be_bytes([head[16], head[17]]) {
        1 => 65536u64,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([head[28], head[29], head[30], head[31]]));
    let change = &head[24..28];
    let valid_for = &head[92..96];
    if pages > 0 && change == valid_for && len < pages.saturating_mul(page_size) {
        return Err(corrupt(format!(
            "truncated: {len} bytes, but its header records {pages} pages of {page_size} bytes ({} bytes)",
            pages.saturating_mul(page_size)
        )));
    }
    Ok(())
}

/// Opens `path` read-only and immutable: SQLite takes no lock and creates no journal, WAL or
/// shared-memory file, so the file and its folder are left exactly as they were.
fn open_read_only(path: &Path) -> Result<Connection, SqliteError> {
    let abs = std::path::absolute(path).map_err(crate::fsio::at("resolve", path))?;
    let uri = format!("file:{}?mode=ro&immutable=1", uri_path(&abs));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(&uri, flags).map_err(|e| SqliteError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// A path as the path part of an SQLite `file:` URI: bytes outside the unreserved set are
/// percent-encoded (so `?`, `#` and `%` in file names survive).
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Every table's column names.
fn table_columns(conn: &Connection) -> rusqlite::Result<BTreeMap<String, BTreeSet<String>>> {
    let mut out = BTreeMap::new();
    let names: Vec<String> = {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        stmt.query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for name in names {
        let mut stmt = conn.prepare(&format!("PRAGMA table_info({})", quote_ident(&name)))?;
        let cols: BTreeSet<String> = stmt
            .query_map([], |r| r.get::<_, String>(1))?
            .collect::<rusqlite::Result<_>>()?;
        out.insert(name, cols);
    }
    Ok(out)
}

/// `SELECT version FROM schema_migrations LIMIT 1`, as opm's migrator reads it; -1 (opm's
/// `NilVersion`) without the table or a row.
fn schema_version(
    conn: &Connection,
    tables: &BTreeMap<String, BTreeSet<String>>,
) -> rusqlite::Result<i64> {
    if !tables.contains_key("schema_migrations") {
        return Ok(-1);
    }
    let mut stmt = conn.prepare("SELECT version FROM schema_migrations LIMIT 1")?;
    let mut rows = stmt.query([])?;
    match rows.next()? {
        Some(row) => Ok(int(row.get_ref(0)?).unwrap_or(-1)),
        None => Ok(-1),
    }
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Reads tables whose columns depend on the schema version: an absent table gives no rows,
/// an absent column reads as `NULL` (what the migration that adds it leaves in old rows).
struct Reader<'a> {
    conn: &'a Connection,
    tables: &'a BTreeMap<String, BTreeSet<String>>,
}

impl Reader<'_> {
    fn rows<T>(
        &self,
        table: &str,
        columns: &[&str],
        make: impl Fn(&[ValueRef<'_>]) -> T,
    ) -> rusqlite::Result<Vec<T>> {
        let Some(present) = self.tables.get(table) else {
            return Ok(Vec::new());
        };
        let select: Vec<String> = columns
            .iter()
            .map(|c| {
                if present.contains(*c) {
                    quote_ident(c)
                } else {
                    "NULL".to_string()
                }
            })
            .collect();
        let sql = format!(
            "SELECT {} FROM {} ORDER BY rowid",
            select.join(", "),
            quote_ident(table)
        );
        // WITHOUT ROWID tables have no rowid; opm never made one, but a damaged schema might.
        let mut stmt = match self.conn.prepare(&sql) {
            Ok(s) => s,
            Err(_) => self.conn.prepare(&format!(
                "SELECT {} FROM {}",
                select.join(", "),
                quote_ident(table)
            ))?,
        };
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let values: Vec<ValueRef<'_>> = (0..columns.len())
                .map(|i| row.get_ref(i))
                .collect::<rusqlite::Result<_>>()?;
            out.push(make(&values));
        }
        Ok(out)
    }

    /// `api_provider`/`api_requirer` keyed by bundle: as stored from schema 6, or re-keyed from
    /// channel entries with migration 006's own join before it.
    fn api_rows(&self, table: &str, version: i64) -> rusqlite::Result<Vec<ApiBundleRow>> {
        let Some(cols) = self.tables.get(table) else {
            return Ok(Vec::new());
        };
        let make = |r: &[ValueRef<'_>]| -> Option<ApiBundleRow> {
            Some(ApiBundleRow {
                group_name: text(r[0])?,
                version: text(r[1])?,
                kind: text(r[2])?,
                operatorbundle_name: text(r[3])?,
                operatorbundle_version: text(r[4]),
                operatorbundle_path: text(r[5]),
            })
        };
        if version >= 6 || !cols.contains("channel_entry_id") {
            let rows = self.rows(
                table,
                &[
                    "group_name",
                    "version",
                    "kind",
                    "operatorbundle_name",
                    "operatorbundle_version",
                    "operatorbundle_path",
                ],
                make,
            )?;
            return Ok(rows.into_iter().flatten().collect());
        }
        let ob_cols = self.tables.get("operatorbundle");
        let col = |c: &str| {
            if ob_cols.is_some_and(|s| s.contains(c)) {
                format!("operatorbundle.{c}")
            } else {
                "NULL".to_string()
            }
        };
        let t = quote_ident(table);
        let sql = format!(
            "SELECT {t}.group_name, {t}.version, {t}.kind, operatorbundle.name, {}, {} FROM {t} \
             INNER JOIN channel_entry ON channel_entry.entry_id = {t}.channel_entry_id \
             INNER JOIN operatorbundle ON operatorbundle.name = channel_entry.operatorbundle_name",
            col("version"),
            col("bundlepath"),
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        while let Some(row) = rows.next()? {
            let values: Vec<ValueRef<'_>> = (0..6)
                .map(|i| row.get_ref(i))
                .collect::<rusqlite::Result<_>>()?;
            if let Some(r) = make(&values)
                && seen.insert(format!("{r:?}"))
            {
                out.push(r);
            }
        }
        Ok(out)
    }
}

/// A column value as Go's `sql.NullString` scans it.
fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(crate::gocompat::marshal::format_float(f)),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

/// A column value as Go's `sql.NullInt64` scans it.
fn int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// APIs by (bundle name, version, path), as (group, version, kind).
type ApisByBundle = BTreeMap<(String, String, String), BTreeSet<(String, String, String)>>;

/// The API rows (`api_requirer` or `api_provider`) grouped by bundle (name, version, path),
/// each bundle's (group, version, kind) sorted as the migrations' queries return them.
fn apis_by_bundle(rows: &[ApiBundleRow]) -> ApisByBundle {
    let mut by_bundle: ApisByBundle = BTreeMap::new();
    for r in rows {
        by_bundle
            .entry((
                r.operatorbundle_name.clone(),
                r.operatorbundle_version.clone().unwrap_or_default(),
                r.operatorbundle_path.clone().unwrap_or_default(),
            ))
            .or_default()
            .insert((r.group_name.clone(), r.version.clone(), r.kind.clone()));
    }
    by_bundle
}

/// The data migrations 008 and 009 would write, applied to the rows in memory.
fn migrate_in_memory(db: &mut IndexDb, version: i64) {
    if version < 8 {
        // 008: one olm.gvk dependency per required API, the value a Go map marshalled
        // (sorted keys, HTML escaped).
        let required = apis_by_bundle(&db.api_requirers);
        for ((name, bversion, path), apis) in required {
            for (g, v, k) in apis {
                let value = go_map_json(&[
                    ("group", &g),
                    ("kind", &k),
                    ("type", property_type::GVK),
                    ("version", &v),
                ]);
                db.add_value(
                    ValueTable::Dependencies,
                    &name,
                    &bversion,
                    &path,
                    property_type::GVK,
                    &value,
                );
            }
        }
    }
    if version < 9 {
        // 009: an olm.package and the olm.gvks of every bundle that provides an API.
        let provided = apis_by_bundle(&db.api_providers);
        for ((name, bversion, path), apis) in provided {
            let package = db
                .channel_entries
                .iter()
                .find(|e| e.operatorbundle_name.as_deref() == Some(name.as_str()))
                .and_then(|e| e.package_name.clone())
                .unwrap_or_default();
            let value = go_map_json(&[("packageName", &package), ("version", &bversion)]);
            db.add_value(
                ValueTable::Properties,
                &name,
                &bversion,
                &path,
                property_type::PACKAGE,
                &value,
            );
            for (g, v, k) in apis {
                let value = go_map_json(&[("group", &g), ("kind", &k), ("version", &v)]);
                db.add_value(
                    ValueTable::Properties,
                    &name,
                    &bversion,
                    &path,
                    property_type::GVK,
                    &value,
                );
            }
        }
        // 009's `UPDATE dependencies SET value = (SELECT json_remove(value, "$.type") FROM
        // dependencies WHERE operatorbundle_name=dependencies.operatorbundle_name)`: the
        // subquery is not correlated, so every row gets the first named row's value.
        let first = db
            .dependencies
            .iter()
            .find(|d| d.operatorbundle_name.is_some())
            .and_then(|d| d.value.as_deref())
            .and_then(json_remove_type);
        for d in &mut db.dependencies {
            d.value = first.clone();
        }
    }
}

/// A Go `map[string]string` marshalled with `json.Marshal`: keys given sorted, HTML escaped.
fn go_map_json(fields: &[(&str, &str)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(&mut out, k, true);
        out.push(':');
        write_str(&mut out, v, true);
    }
    out.push('}');
    out
}

/// SQLite's `json_remove(value, '$.type')` on a flat object of strings: the other members,
/// minified, in their order, their string text kept as written.
fn json_remove_type(value: &str) -> Option<String> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(value).ok()?;
    let mut out = String::from("{");
    let mut first = true;
    for (k, v) in &map {
        if k == "type" {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_str(&mut out, k, true);
        out.push(':');
        match v {
            serde_json::Value::String(s) => write_str(&mut out, s, true),
            other => out.push_str(&other.to_string()),
        }
    }
    out.push('}');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_escape_reserved_bytes() {
        assert_eq!(
            uri_path(Path::new("/a b/x?y#z%.db")),
            "/a%20b/x%3Fy%23z%25.db"
        );
    }

    #[test]
    fn json_remove_drops_the_type_key() {
        assert_eq!(
            json_remove_type(r#"{"group":"g","kind":"K","type":"olm.gvk","version":"v1"}"#)
                .unwrap(),
            r#"{"group":"g","kind":"K","version":"v1"}"#
        );
    }

    /// opm v1.73.0's `listBundlesQuery` (pkg/sqlite/query.go, Apache-2.0), the edge part: what
    /// [`IndexDb::to_declarative_config`] reimplements on the rows, run by SQLite itself.
    const OPM_EDGES_QUERY: &str = r#"
WITH RECURSIVE
tip (depth) AS (
  SELECT min(depth)
  FROM channel_entry
), replaces_entry (entry_id, replaces) AS (
  SELECT entry_id, replaces
    FROM channel_entry
      INNER JOIN tip ON channel_entry.depth = tip.depth
  UNION
  SELECT channel_entry.entry_id, channel_entry.replaces
    FROM channel_entry
      INNER JOIN replaces_entry
        ON channel_entry.entry_id = replaces_entry.replaces
), replaces_bundle (entry_id, operatorbundle_name, package_name, channel_name, replaces) AS (
  SELECT min(all_entry.entry_id), all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name, max(replaced_entry.operatorbundle_name)
    FROM channel_entry AS all_entry
      LEFT OUTER JOIN replaces_entry
        ON all_entry.entry_id = replaces_entry.entry_id
      LEFT OUTER JOIN channel_entry AS replaced_entry
        ON replaces_entry.replaces = replaced_entry.entry_id
    GROUP BY all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name
), skips_entry (entry_id, skips) AS (
  SELECT entry_id, replaces
    FROM channel_entry
    WHERE replaces IS NOT NULL
  EXCEPT
  SELECT entry_id, replaces
    FROM replaces_entry
), skips_bundle (operatorbundle_name, package_name, channel_name, skips) AS (
  SELECT all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name, group_concat(skipped_entry.operatorbundle_name, ",")
    FROM skips_entry
      INNER JOIN channel_entry AS all_entry
        ON skips_entry.entry_id = all_entry.entry_id
      INNER JOIN channel_entry AS skipped_entry
        ON skips_entry.skips = skipped_entry.entry_id
    GROUP BY all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name
)
SELECT
    operatorbundle.name,
    replaces_bundle.channel_name,
    replaces_bundle.replaces,
    skips_bundle.skips
  FROM replaces_bundle
    INNER JOIN operatorbundle
      ON replaces_bundle.operatorbundle_name = operatorbundle.name
    LEFT OUTER JOIN skips_bundle
      ON replaces_bundle.operatorbundle_name = skips_bundle.operatorbundle_name
        AND replaces_bundle.package_name = skips_bundle.package_name
        AND replaces_bundle.channel_name = skips_bundle.channel_name"#;

    /// The loader's walk (`addPackageChannels`) for one channel over `graph` (name → (replaces,
    /// skips)), written to `conn`.
    fn load_channel(
        conn: &Connection,
        channel: &str,
        head: &str,
        graph: &BTreeMap<&str, (&str, Vec<&str>)>,
    ) {
        let add = |bundle: &str, depth: i64| -> i64 {
            conn.execute(
                "INSERT INTO channel_entry(channel_name, package_name, operatorbundle_name, depth) VALUES(?1, 'p', ?2, ?3)",
                rusqlite::params![channel, bundle, depth],
            )
            .unwrap();
            conn.last_insert_rowid()
        };
        let set = |id: i64, replaced: i64| {
            conn.execute(
                "UPDATE channel_entry SET replaces = ?1 WHERE entry_id = ?2",
                [replaced, id],
            )
            .unwrap();
        };
        conn.execute(
            "INSERT INTO channel VALUES(?1, 'p', ?2)",
            rusqlite::params![channel, head],
        )
        .unwrap();
        let mut current = add(head, 0);
        let mut name = head;
        let mut depth = 1;
        loop {
            let (replaces, skips) = &graph[name];
            for skip in skips {
                let skipped = add(skip, depth);
                let synthesized = add(name, depth);
                set(synthesized, skipped);
                depth += 1;
            }
            if replaces.is_empty() {
                break;
            }
            let replaced = add(replaces, depth);
            set(current, replaced);
            current = replaced;
            name = replaces;
            depth += 1;
        }
    }

    /// (channel, bundle) → (replaces, skips).
    type Edges = BTreeMap<(String, String), (String, Vec<String>)>;

    #[test]
    fn edges_agree_with_opms_own_query() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("index.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations(version INTEGER, dirty BOOL);
             INSERT INTO schema_migrations VALUES(13, 0);
             CREATE TABLE operatorbundle(name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT, skiprange TEXT, version TEXT, replaces TEXT, skips TEXT, substitutesfor TEXT);
             CREATE TABLE package(name TEXT PRIMARY KEY, default_channel TEXT);
             CREATE TABLE channel(name TEXT, package_name TEXT, head_operatorbundle_name TEXT, PRIMARY KEY(name, package_name));
             CREATE TABLE channel_entry(entry_id INTEGER PRIMARY KEY, channel_name TEXT, package_name TEXT, operatorbundle_name TEXT, replaces INTEGER, depth INTEGER);
             CREATE TABLE properties(type TEXT, value TEXT, operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT);
             INSERT INTO package VALUES('p', 'a');",
        )
        .unwrap();
        // c5 skips three names (one of them on its own chain), c3 skips one, c9 is in no
        // channel; channel b starts lower down the same chain.
        let graph: BTreeMap<&str, (&str, Vec<&str>)> = [
            ("c5", ("c4", vec!["zz-gone", "c1", "a-gone"])),
            ("c4", ("c3", vec![])),
            ("c3", ("c2", vec!["m-gone"])),
            ("c2", ("c1", vec![])),
            ("c1", ("", vec![])),
            ("c9", ("", vec![])),
        ]
        .into();
        for (i, name) in graph.keys().enumerate() {
            let csv = format!(
                r#"{{"kind":"ClusterServiceVersion","metadata":{{"name":"{name}"}},"spec":{{}}}}"#
            );
            conn.execute(
                "INSERT INTO operatorbundle(name, csv, bundle, bundlepath, version) VALUES(?1, ?2, ?2, '', ?3)",
                rusqlite::params![name, csv, format!("1.0.{i}")],
            )
            .unwrap();
        }
        load_channel(&conn, "a", "c5", &graph);
        load_channel(&conn, "b", "c3", &graph);
        let mut want: Edges = BTreeMap::new();
        let mut stmt = conn.prepare(OPM_EDGES_QUERY).unwrap();
        let mut rows = stmt.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let name: String = r.get(0).unwrap();
            let channel: String = r.get(1).unwrap();
            let replaces: Option<String> = r.get(2).unwrap();
            let skips: Option<String> = r.get(3).unwrap();
            want.insert(
                (channel, name),
                (
                    replaces.unwrap_or_default(),
                    skips
                        .map(|s| s.split(',').map(str::to_string).collect())
                        .unwrap_or_default(),
                ),
            );
        }
        drop(rows);
        drop(stmt);
        drop(conn);
        let db = read_index(&path).unwrap();
        let mut got: Edges = BTreeMap::new();
        for ch in db.to_declarative_config().unwrap().channels {
            for e in ch.entries.unwrap_or_default() {
                got.insert((ch.name.clone(), e.name), (e.replaces, e.skips));
            }
        }
        assert!(want.values().any(|(_, s)| s.len() == 3), "{want:?}");
        assert_eq!(got, want);
    }
}
