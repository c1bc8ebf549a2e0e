//! `catalog graph -o mermaid` against operator-registry's own `TestWriteMermaidChannels`
//! (`alpha/declcfg/write_test.go`), byte for byte: its catalog (`buildValidDeclarativeConfig`
//! with unrecognized blobs and deprecations, as its `TestWriteYAML` prints it:
//! `testdata/catalogs/opm-declcfg`), its three cases with opm's default writer (v0 semantics
//! drawn, `--draw-v0-semantics` here), and what `opm alpha render-graph` prints since v1.57
//! without `--draw-v0-semantics` (no `skipped` class, no red links).

use std::path::PathBuf;

fn graph(extra: &[&str]) -> (Option<i32>, String, String) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/catalogs/opm-declcfg");
    let out = crate::support::cmd::olmpack_cmd()
        .args(["catalog", "graph", "-o", "mermaid"])
        .arg(&dir)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const NO_FILTERS: &str = r##"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "anakin"
  subgraph "anakin"
    %% channel "dark"
    subgraph anakin-dark["dark"]
      anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]-- skip --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]
    end
    %% channel "light"
    subgraph anakin-light["light"]
      anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]
    end
  end
  %% package "boba-fett"
  subgraph "boba-fett"
    %% channel "mando"
    subgraph boba-fett-mando["mando"]
      boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]-- replace --> boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]
    end
  end
style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.0.1,anakin-light-anakin.v0.0.1 deprecated
class anakin-dark-anakin.v0.1.0 skipped
linkStyle 2 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
"##;

const MIN_EDGE: &str = r##"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "anakin"
  subgraph "anakin"
    %% channel "dark"
    subgraph anakin-dark["dark"]
      anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]-- skip --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
    end
    %% channel "light"
    subgraph anakin-light["light"]
      anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
    end
  end
style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.1.0 skipped
"##;

const PACKAGE: &str = r##"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "boba-fett"
  subgraph "boba-fett"
    %% channel "mando"
    subgraph boba-fett-mando["mando"]
      boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]-- replace --> boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]
    end
  end
"##;

#[test]
fn upstream_mermaid_cases_byte_for_byte() {
    let cases: [(&str, &[&str], &str); 3] = [
        ("SuccessNoFilters", &["--draw-v0-semantics"], NO_FILTERS),
        (
            "SuccessMinEdgeFilter",
            &["--draw-v0-semantics", "--minimum-edge", "anakin.v0.1.0"],
            MIN_EDGE,
        ),
        (
            "SuccessPackageNameFilter",
            &["--draw-v0-semantics", "--package", "boba-fett"],
            PACKAGE,
        ),
    ];
    let mut ran = 0;
    for (name, args, want) in cases {
        let (code, out, err) = graph(args);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert_eq!(out, want, "{name}");
        ran += 1;
    }
    assert_eq!(ran, 3);
}

#[test]
fn render_graph_since_1_57_draws_no_v0_semantics_by_default() {
    let (code, out, err) = graph(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        r##"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "anakin"
  subgraph "anakin"
    %% channel "dark"
    subgraph anakin-dark["dark"]
      anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]-- skip --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]
    end
    %% channel "light"
    subgraph anakin-light["light"]
      anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]
    end
  end
  %% package "boba-fett"
  subgraph "boba-fett"
    %% channel "mando"
    subgraph boba-fett-mando["mando"]
      boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]-- replace --> boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]
    end
  end
style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.0.1,anakin-light-anakin.v0.0.1 deprecated
"##
    );
    // The package filter alone has nothing to style: the same bytes either way.
    assert_eq!(graph(&["--package", "boba-fett"]).1, PACKAGE);
}

#[test]
fn an_unknown_minimum_edge_is_opms_error() {
    let (code, out, err) = graph(&["--minimum-edge", "nope.v1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("unknown minimum edge name: \"nope.v1\""),
        "{err}"
    );
    let (code, _, err) = graph(&["-o", "svg", "--minimum-edge", "anakin.v0.1.0"]);
    assert_eq!(code, Some(2), "{err}");
}
