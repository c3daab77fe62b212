//! `kernels_without_spec`: the kernels of testdata/bench that its shipped specs do not launch,
//! each once (a template covered by its instantiation, a kernel of another file with the same
//! name not covered), whatever way the paths are spelt.

use runner::Spec;
use specgen::coverage::{kernels_of, summary};
use specgen::{kernels_without_spec, Uncovered};
use std::path::{Path, PathBuf};

fn bench() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bench"))
}

fn parse(p: &Path) -> frontend::SourceFile {
    frontend::parse(&std::fs::read(p).unwrap())
}

#[test]
fn lists_the_kernels_no_spec_launches() {
    let dir = bench();
    let files = [
        "dot.cu",
        "dot.unrolled.cu",
        "stencil.cu",
        "prelude_features.cu",
        "cuda/gelu.cu",
        "cuda/sgemm.cu",
    ]
    .map(|f| dir.join(f));
    let parsed: Vec<frontend::SourceFile> = files.iter().map(|f| parse(f)).collect();
    let kernels: Vec<(&Path, &str)> = files
        .iter()
        .zip(&parsed)
        .flat_map(|(p, f)| kernels_of(p, f))
        .collect();
    let specs: Vec<Spec> = ["dot.toml", "stencil.toml", "cuda/sgemm.toml"]
        .iter()
        .map(|s| Spec::load(&dir.join(s)).unwrap())
        .collect();
    let missing = kernels_without_spec(kernels.iter().copied(), &specs);
    let shown: Vec<(String, &str)> = missing
        .iter()
        .map(|u| {
            (
                u.file.strip_prefix(&dir).unwrap().display().to_string(),
                u.kernel.as_str(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("dot.unrolled.cu".to_string(), "dot"),
            ("prelude_features.cu".to_string(), "features"),
            ("cuda/gelu.cu".to_string(), "gelu_forward"),
        ]
    );
    // Every spec: none left; no spec: every kernel, each once even when listed twice.
    let all: Vec<Spec> = [
        "dot.toml",
        "stencil.toml",
        "cuda/sgemm.toml",
        "cuda/gelu.toml",
    ]
    .iter()
    .map(|s| Spec::load(&dir.join(s)).unwrap())
    .collect();
    let rest: Vec<(&Path, &str)> = kernels
        .iter()
        .copied()
        .filter(|(p, _)| !p.ends_with("dot.unrolled.cu") && !p.ends_with("prelude_features.cu"))
        .collect();
    assert!(kernels_without_spec(rest.iter().copied(), &all).is_empty());
    let twice = kernels.iter().chain(kernels.iter()).copied();
    assert_eq!(kernels_without_spec(twice, &[]).len(), kernels.len());
}

#[test]
fn one_line_names_the_first_and_counts_the_rest() {
    let u = |f: &str, k: &str| Uncovered {
        file: PathBuf::from(f),
        kernel: k.into(),
    };
    let list = [
        u("a.cu", "k1"),
        u("a.cu", "ns::k2"),
        u("b.cu", "k3"),
        u("c.cu", "k4"),
    ];
    assert_eq!(summary(&[], 10), None);
    assert_eq!(
        summary(&list[..1], 10).unwrap(),
        "1 kernel without a spec: `hip-unroll spec new` writes one (a.cu: k1)"
    );
    assert_eq!(
        summary(&list, 10).unwrap(),
        "4 kernels without a spec: `hip-unroll spec new` writes one (a.cu: k1, ns::k2; b.cu: k3; c.cu: k4)"
    );
    assert_eq!(
        summary(&list, 3).unwrap(),
        "4 kernels without a spec: `hip-unroll spec new` writes one (a.cu: k1, ns::k2; b.cu: k3; 1 more)"
    );
    assert_eq!(
        summary(&list, 0).unwrap(),
        "4 kernels without a spec: `hip-unroll spec new` writes one (4 more)"
    );
}

#[test]
fn paths_match_however_they_are_spelt() {
    let dir = bench();
    let spec = Spec::load(&dir.join("cuda/../dot.toml")).unwrap();
    let spelt = dir.join("cuda/../dot.cu");
    assert!(
        kernels_without_spec([(spelt.as_path(), "dot")], std::slice::from_ref(&spec)).is_empty()
    );
    // The same kernel name in another file is not covered.
    let other = dir.join("dot.unrolled.cu");
    assert_eq!(
        kernels_without_spec([(other.as_path(), "dot")], &[spec]),
        [Uncovered {
            file: other.clone(),
            kernel: "dot".into()
        }]
    );
}
