//! `ExperimentalListPackageCustomSchemas` (opm v1.69, #1981) checked by Python grpcio (stubs
//! generated at test time from `proto/registry.proto`): operator-registry's
//! `TestExperimentalListPackageCustomSchemas` cases (6) on its own catalog
//! (`testdata/catalogs/custom-schemas`), plus opm's messages for a schema or package outside
//! its pattern and a header that is not `true`. Skips without the Python modules (fails under
//! `OLMPACK_REQUIRE_CORPUS=1`).

use crate::support::proc::{Bounded, LIMIT};
use crate::support::shared::{self, PYTHON};

use serde_json::json;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn experimental_custom_schemas_as_upstream_tests_them() {
    if !shared::python_grpc_ready() {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(PYTHON)
        .arg(root.join("tests/support/serve_client.py"))
        .arg("experimental")
        .arg(env!("CARGO_BIN_EXE_olmpack"))
        .arg(root.join("testdata/catalogs/custom-schemas"))
        .arg(root.join("proto/registry.proto"))
        .output_within(LIMIT)
        .expect("run python client");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Upstream's six cases.
    assert_eq!(
        r["FBCCacheWithCustomSchemas"],
        json!([
            {"schema": "custom.operator.io", "package": "testpkg", "name": "my-custom-resource", "customField": "customValue"},
            {"schema": "custom.operator.io", "package": "testpkg", "name": "another-custom-resource", "data": {"key": "value"}}
        ]),
        "{r}"
    );
    assert_eq!(r["FBCCacheNoResults"], json!([]), "{r}");
    assert_eq!(
        r["FBCCacheInvalidArgument"],
        json!({"code": "INVALID_ARGUMENT", "message": "schema is required"}),
        "{r}"
    );
    assert_eq!(
        r["FBCCachePackageless"],
        json!([{"schema": "custom.packageless", "name": "global-config", "data": "packageless-value"}]),
        "{r}"
    );
    assert_eq!(r["FBCCacheMissingExperimentalHeader"], json!([]), "{r}");
    assert_eq!(r["FBCCacheCancelledContext"]["code"], "CANCELLED", "{r}");
    // opm's messages beyond upstream's table.
    assert_eq!(
        r["InvalidSchema"],
        json!({"code": "INVALID_ARGUMENT", "message": "invalid custom schema query: invalid schema \"../etc\": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$"}),
        "{r}"
    );
    assert_eq!(
        r["InvalidPackage"],
        json!({"code": "INVALID_ARGUMENT", "message": "invalid custom schema query: invalid packageName \"a/b\": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$"}),
        "{r}"
    );
    assert_eq!(r["HeaderNotTrue"], json!([]), "{r}");
    assert_eq!(r["exitAfterSigterm"], 0, "{r}");
}
