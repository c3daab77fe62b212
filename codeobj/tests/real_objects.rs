//! Reads real code objects built here (Debian's hipcc for gfx90a/gfx940, bundles, multi-target
//! bundles and host executables; clang-19 for gfx942 and gfx1100 wave32/wave64, plain and
//! compressed bundles) and checks every field against `llvm-readelf-19 --notes` (its YAML),
//! unbundled independently with `clang-offload-bundler-19` and `llvm-objcopy-19`.
//! Needs: hipcc, clang-19, clang-offload-bundler-19, llvm-readelf-19, llvm-objcopy-19, llvm-cxxfilt-19.

use codeobj::compressed::{self, Method};
use codeobj::CodeObject;
use serde_yaml::Value as Y;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/codeobj");

struct Built {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Built {
    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e} (install the tools listed in .ci/run)")
    });
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn src(name: &str) -> String {
    format!("{TESTDATA}/{name}")
}

/// Build every object once per test binary, in parallel.
fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let o = |n: &str| root.join(n).display().to_string();
        let kernels = src("kernels.cu");
        let bare = src("bare.cu");
        let clang_dev = [
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpulib",
            "-nogpuinc",
            "-O3",
        ];
        let mut jobs: Vec<Vec<String>> = vec![
            vec![
                "hipcc",
                "--offload-arch=gfx90a",
                "--genco",
                "-O3",
                &kernels,
                "-o",
                &o("gfx90a.hsaco"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            vec![
                "hipcc",
                "--offload-arch=gfx940",
                "--genco",
                "-O3",
                &kernels,
                "-o",
                &o("gfx940.hsaco"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            vec![
                "hipcc",
                "--offload-arch=gfx90a:sramecc+:xnack-",
                "--offload-arch=gfx940",
                "--genco",
                "-O3",
                &kernels,
                "-o",
                &o("multi.hsaco"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            vec![
                "hipcc",
                "--offload-arch=gfx90a",
                "-O3",
                &kernels,
                "-o",
                &o("app"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            vec![
                "hipcc",
                "--offload-arch=gfx90a",
                "-O3",
                &kernels,
                &src("rowsum.cu"),
                "-o",
                &o("app2"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            vec![
                "hipcc",
                "--offload-arch=gfx90a",
                "--genco",
                "-O3",
                &src("rowsum.cu"),
                "-o",
                &o("rowsum.hsaco"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
        ];
        for (arch, extra, out) in [
            ("gfx942", vec!["--no-gpu-bundle-output"], "gfx942.co"),
            ("gfx1100", vec!["--no-gpu-bundle-output"], "gfx1100w32.co"),
            (
                "gfx1100",
                vec!["--no-gpu-bundle-output", "-mwavefrontsize64"],
                "gfx1100w64.co",
            ),
        ] {
            let mut v: Vec<String> = vec!["clang-19".into(), format!("--offload-arch={arch}")];
            v.extend(clang_dev.iter().map(|s| s.to_string()));
            v.extend(extra.iter().map(|s| s.to_string()));
            v.extend([bare.clone(), "-o".into(), o(out)]);
            jobs.push(v);
        }
        for (extra, out) in [
            (None, "clang_bundle.co"),
            (Some("--offload-compress"), "ccob_v2_zstd.co"),
        ] {
            let mut v: Vec<String> = vec![
                "clang-19".into(),
                "--offload-arch=gfx942".into(),
                "--offload-arch=gfx1100".into(),
            ];
            v.extend(clang_dev.iter().map(|s| s.to_string()));
            v.extend(extra.map(String::from));
            v.extend([bare.clone(), "-o".into(), o(out)]);
            jobs.push(v);
        }
        std::thread::scope(|s| {
            for j in &jobs {
                s.spawn(move || run(Command::new(&j[0]).args(&j[1..])));
            }
        });
        // Compressed bundles clang-19 does not write (it writes v2 zstd): v1 zlib, v3 zstd and
        // v2 zlib, built around the real clang bundle with the header layout of OffloadBundler.cpp.
        let plain = std::fs::read(root.join("clang_bundle.co")).unwrap();
        for (v, m, n) in [
            (1, Method::Zlib, "ccob_v1_zlib.co"),
            (3, Method::Zstd, "ccob_v3_zstd.co"),
            (2, Method::Zlib, "ccob_v2_zlib.co"),
        ] {
            std::fs::write(root.join(n), compressed::compress(&plain, v, m).unwrap()).unwrap();
        }
        Built { _dir: dir, root }
    })
}

/// The YAML metadata documents `llvm-readelf-19 --notes` prints for one ELF file.
fn readelf(elf: &Path) -> Y {
    let text =
        String::from_utf8(run(Command::new("llvm-readelf-19").arg("--notes").arg(elf))).unwrap();
    let start = text
        .find("\n---\n")
        .or_else(|| text.find("---\n"))
        .expect("a YAML document in llvm-readelf's output");
    let body = &text[start..];
    let end = body.find("\n...").expect("end of YAML document");
    serde_yaml::from_str(&body[..end]).unwrap()
}

/// Independently list and extract the device code objects of a bundle (plain or compressed)
/// with clang-offload-bundler-19: (entry id, YAML metadata).
fn oracle_bundle(bundle: &Path, scratch: &Path) -> Vec<(String, Y)> {
    let ids = String::from_utf8(run(Command::new("clang-offload-bundler-19")
        .args(["--list", "--type=o"])
        .arg(format!("--input={}", bundle.display()))))
    .unwrap();
    let mut out = Vec::new();
    for (i, id) in ids
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("host-"))
        .enumerate()
    {
        let file = scratch.join(format!(
            "{}-{i}.elf",
            bundle.file_name().unwrap().to_string_lossy()
        ));
        run(Command::new("clang-offload-bundler-19")
            .args(["--unbundle", "--type=o"])
            .arg(format!("--input={}", bundle.display()))
            .arg(format!("--targets={id}"))
            .arg(format!("--output={}", file.display())));
        out.push((id.to_string(), readelf(&file)));
    }
    out
}

fn y<'a>(m: &'a Y, k: &str) -> Option<&'a Y> {
    m.as_mapping().and_then(|m| m.get(Y::String(k.into())))
}

fn y_u32(m: &Y, k: &str) -> Option<u32> {
    y(m, k).map(|v| {
        v.as_u64()
            .unwrap_or_else(|| panic!("{k} not an integer: {v:?}")) as u32
    })
}

fn y_str(m: &Y, k: &str) -> Option<String> {
    y(m, k).map(|v| {
        v.as_str()
            .unwrap_or_else(|| panic!("{k} not a string: {v:?}"))
            .to_string()
    })
}

fn y_bool(m: &Y, k: &str) -> Option<bool> {
    y(m, k).map(|v| {
        v.as_bool()
            .or_else(|| v.as_u64().map(|n| n != 0))
            .unwrap_or_else(|| panic!("{k} not a boolean: {v:?}"))
    })
}

fn demangle_oracle(name: &str) -> Option<String> {
    let out = String::from_utf8(run(Command::new("llvm-cxxfilt-19").arg(name))).unwrap();
    let d = out.trim().to_string();
    (d != name).then_some(d)
}

/// Every field codeobj reads, and every field of the `inspect` JSON, against the oracle YAML.
fn check(ours: &CodeObject, yaml: &Y) {
    let ctx = &ours.source;
    let version: Vec<u64> = y(yaml, "amdhsa.version")
        .unwrap()
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(ours.metadata.version, version, "{ctx}: amdhsa.version");
    let target = y_str(yaml, "amdhsa.target");
    assert_eq!(ours.metadata.target, target, "{ctx}: amdhsa.target");
    let processor = target
        .as_deref()
        .unwrap()
        .splitn(5, '-')
        .nth(4)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(ours.arch, processor, "{ctx}: arch");
    let kernels = y(yaml, "amdhsa.kernels").unwrap().as_sequence().unwrap();
    assert_eq!(ours.kernels.len(), kernels.len(), "{ctx}: kernel count");
    let doc = serde_json::to_value(codeobj::inspect::document(std::slice::from_ref(ours))).unwrap();
    let rows = doc["code_objects"][0]["kernels"].as_array().unwrap();
    assert_eq!(doc["code_objects"][0]["arch"], processor.as_str());
    assert_eq!(doc["code_objects"][0]["source"], ours.source.as_str());
    for yk in kernels {
        let name = y_str(yk, ".name").unwrap();
        let k = ours
            .kernels
            .iter()
            .find(|k| k.meta.name == name)
            .unwrap_or_else(|| panic!("{ctx}: kernel {name} missing"));
        let m = &k.meta;
        let ctx = format!("{ctx} {name}");
        assert_eq!(
            Some(m.symbol.clone()),
            y_str(yk, ".symbol"),
            "{ctx}: .symbol"
        );
        assert_eq!(
            Some(m.vgpr_count),
            y_u32(yk, ".vgpr_count"),
            "{ctx}: .vgpr_count"
        );
        assert_eq!(m.agpr_count, y_u32(yk, ".agpr_count"), "{ctx}: .agpr_count");
        assert_eq!(
            Some(m.sgpr_count),
            y_u32(yk, ".sgpr_count"),
            "{ctx}: .sgpr_count"
        );
        assert_eq!(
            Some(m.vgpr_spill_count),
            y_u32(yk, ".vgpr_spill_count"),
            "{ctx}: .vgpr_spill_count"
        );
        assert_eq!(
            Some(m.sgpr_spill_count),
            y_u32(yk, ".sgpr_spill_count"),
            "{ctx}: .sgpr_spill_count"
        );
        assert_eq!(
            Some(m.group_segment_fixed_size),
            y_u32(yk, ".group_segment_fixed_size"),
            "{ctx}"
        );
        assert_eq!(
            Some(m.private_segment_fixed_size),
            y_u32(yk, ".private_segment_fixed_size"),
            "{ctx}"
        );
        assert_eq!(
            Some(m.kernarg_segment_size),
            y_u32(yk, ".kernarg_segment_size"),
            "{ctx}"
        );
        assert_eq!(
            Some(m.kernarg_segment_align),
            y_u32(yk, ".kernarg_segment_align"),
            "{ctx}"
        );
        assert_eq!(
            Some(m.wavefront_size),
            y_u32(yk, ".wavefront_size"),
            "{ctx}"
        );
        assert_eq!(
            Some(m.max_flat_workgroup_size),
            y_u32(yk, ".max_flat_workgroup_size"),
            "{ctx}"
        );
        assert_eq!(
            m.uses_dynamic_stack,
            y_bool(yk, ".uses_dynamic_stack"),
            "{ctx}"
        );
        assert_eq!(
            m.workgroup_processor_mode,
            y_bool(yk, ".workgroup_processor_mode"),
            "{ctx}"
        );
        let yargs = y(yk, ".args")
            .map(|a| a.as_sequence().unwrap().clone())
            .unwrap_or_default();
        assert_eq!(m.args.len(), yargs.len(), "{ctx}: argument count");
        for (i, (a, ya)) in m.args.iter().zip(&yargs).enumerate() {
            assert_eq!(a.name, y_str(ya, ".name"), "{ctx} arg {i}");
            assert_eq!(a.type_name, y_str(ya, ".type_name"), "{ctx} arg {i}");
            assert_eq!(Some(a.offset), y_u32(ya, ".offset"), "{ctx} arg {i}");
            assert_eq!(Some(a.size), y_u32(ya, ".size"), "{ctx} arg {i}");
            assert_eq!(
                Some(a.value_kind.clone()),
                y_str(ya, ".value_kind"),
                "{ctx} arg {i}"
            );
            assert_eq!(
                a.address_space,
                y_str(ya, ".address_space"),
                "{ctx} arg {i}"
            );
            assert_eq!(a.access, y_str(ya, ".access"), "{ctx} arg {i}");
            assert_eq!(
                a.actual_access,
                y_str(ya, ".actual_access"),
                "{ctx} arg {i}"
            );
            assert_eq!(a.is_const, y_bool(ya, ".is_const"), "{ctx} arg {i}");
            assert_eq!(a.is_restrict, y_bool(ya, ".is_restrict"), "{ctx} arg {i}");
            assert_eq!(a.is_volatile, y_bool(ya, ".is_volatile"), "{ctx} arg {i}");
        }
        // The kernel descriptor agrees with the note.
        let d = k
            .descriptor
            .unwrap_or_else(|| panic!("{ctx}: no kernel descriptor {}", m.symbol));
        assert_eq!(
            d.group_segment_fixed_size, m.group_segment_fixed_size,
            "{ctx}: kd group segment"
        );
        assert_eq!(
            d.private_segment_fixed_size, m.private_segment_fixed_size,
            "{ctx}: kd private segment"
        );
        assert_eq!(
            d.kernarg_size, m.kernarg_segment_size,
            "{ctx}: kd kernarg size"
        );
        assert_eq!(d.wave32(), m.wavefront_size == 32, "{ctx}: kd wave32 bit");
        if let Some(wgp) = m.workgroup_processor_mode {
            assert_eq!(d.wgp_mode(), wgp, "{ctx}: kd WGP_MODE");
        }
        // The inspect row, field by field.
        let row = rows.iter().find(|r| r["name"] == name.as_str()).unwrap();
        let u = |v: Option<u32>| serde_json::json!(v.unwrap_or(0));
        assert_eq!(
            row["symbol"],
            y_str(yk, ".symbol").unwrap().as_str(),
            "{ctx}"
        );
        assert_eq!(row["arch"], processor.as_str(), "{ctx}");
        assert_eq!(
            row["demangled"],
            serde_json::json!(demangle_oracle(&name)),
            "{ctx}: demangled"
        );
        assert_eq!(
            row["wavefront_size"],
            u(y_u32(yk, ".wavefront_size")),
            "{ctx}"
        );
        assert_eq!(row["vgpr_count"], u(y_u32(yk, ".vgpr_count")), "{ctx}");
        assert_eq!(row["agpr_count"], u(y_u32(yk, ".agpr_count")), "{ctx}");
        assert_eq!(row["sgpr_count"], u(y_u32(yk, ".sgpr_count")), "{ctx}");
        assert_eq!(
            row["vgpr_spill_count"],
            u(y_u32(yk, ".vgpr_spill_count")),
            "{ctx}"
        );
        assert_eq!(
            row["sgpr_spill_count"],
            u(y_u32(yk, ".sgpr_spill_count")),
            "{ctx}"
        );
        assert_eq!(
            row["lds_bytes"],
            u(y_u32(yk, ".group_segment_fixed_size")),
            "{ctx}"
        );
        assert_eq!(
            row["scratch_bytes"],
            u(y_u32(yk, ".private_segment_fixed_size")),
            "{ctx}"
        );
        assert_eq!(
            row["kernarg_size"],
            u(y_u32(yk, ".kernarg_segment_size")),
            "{ctx}"
        );
        assert_eq!(
            row["max_flat_workgroup_size"],
            u(y_u32(yk, ".max_flat_workgroup_size")),
            "{ctx}"
        );
        // Occupancy from the oracle's numbers with the formulas of codeobj::occupancy (tested
        // against hand-computed values in its unit tests).
        let arch = codeobj::occupancy::arch_info(&processor).expect("known processor");
        let occ = codeobj::occupancy::occupancy(
            &arch,
            &codeobj::occupancy::Usage {
                vgprs: y_u32(yk, ".vgpr_count").unwrap(),
                sgprs: y_u32(yk, ".sgpr_count").unwrap(),
                lds_bytes: y_u32(yk, ".group_segment_fixed_size").unwrap(),
                workgroup_size: y_u32(yk, ".max_flat_workgroup_size").unwrap(),
                wave_size: y_u32(yk, ".wavefront_size").unwrap(),
                wgp_mode: y_bool(yk, ".workgroup_processor_mode").unwrap_or(d.wgp_mode()),
            },
        );
        assert_eq!(
            row["occupancy"]["waves_per_simd"], occ.waves_per_simd,
            "{ctx}"
        );
        assert_eq!(
            row["occupancy"]["limited_by"],
            occ.limited_by.as_str(),
            "{ctx}"
        );
    }
}

fn check_bundle_file(name: &str, expected_targets: &[&str]) {
    let b = built();
    let path = b.path(name);
    let ours = codeobj::load(&path).unwrap();
    let oracle = oracle_bundle(&path, &b.root);
    assert_eq!(ours.len(), oracle.len(), "{name}: code object count");
    assert_eq!(ours.len(), expected_targets.len(), "{name}");
    for (id, yaml) in &oracle {
        let co = ours
            .iter()
            .find(|c| c.source.ends_with(&format!("#{id}")))
            .unwrap_or_else(|| panic!("{name}: no code object for {id}"));
        check(co, yaml);
    }
    for t in expected_targets {
        assert!(
            ours.iter()
                .any(|c| c.target_id == *t || c.source.ends_with(t)),
            "{name}: no {t}"
        );
    }
}

#[test]
fn hipcc_gfx90a_bundle() {
    check_bundle_file("gfx90a.hsaco", &["gfx90a"]);
    let ours = codeobj::load(&built().path("gfx90a.hsaco")).unwrap();
    let k = ours[0]
        .kernels
        .iter()
        .find(|k| k.meta.name == "_Z7spillerPKfPfi")
        .unwrap();
    assert!(
        k.spills() && k.meta.private_segment_fixed_size > 0,
        "the spiller kernel spills: {:?}",
        k.meta
    );
}

#[test]
fn hipcc_gfx940_bundle() {
    check_bundle_file("gfx940.hsaco", &["gfx940"]);
}

#[test]
fn hipcc_multi_target_bundle_with_features() {
    check_bundle_file("multi.hsaco", &["gfx90a:sramecc+:xnack-", "gfx940"]);
}

#[test]
fn clang19_bundle_and_compressed_bundles() {
    check_bundle_file("clang_bundle.co", &["gfx942", "gfx1100"]);
    // clang-19's own compressed bundle (v2, zstd) and the synthesised ones; the bundler reads
    // all of them too (its --list/--unbundle is the oracle).
    let v2 = std::fs::read(built().path("ccob_v2_zstd.co")).unwrap();
    let h = compressed::parse_header(&v2).unwrap();
    assert_eq!((h.version, h.method), (2, Method::Zstd));
    assert_eq!(h.total_size, Some(v2.len() as u64));
    for n in ["ccob_v2_zstd.co", "ccob_v2_zlib.co"] {
        check_bundle_file(n, &["gfx942", "gfx1100"]);
    }
    // clang-19's bundler reads only v2 (v3 came later; v1 is read as v2), so v1 and v3 are
    // compared with the plain bundle they wrap, which the oracle checked above.
    let plain = codeobj::load(&built().path("clang_bundle.co")).unwrap();
    for n in ["ccob_v1_zlib.co", "ccob_v3_zstd.co"] {
        let ours = codeobj::load(&built().path(n)).unwrap();
        assert_eq!(ours.len(), plain.len(), "{n}");
        for (a, b) in ours.iter().zip(&plain) {
            assert_eq!(
                (&a.metadata, &a.target_id),
                (&b.metadata, &b.target_id),
                "{n}"
            );
        }
    }
}

#[test]
fn clang19_bare_elf_gfx942_and_gfx1100_wave32_wave64() {
    for (n, wave) in [
        ("gfx942.co", 64),
        ("gfx1100w32.co", 32),
        ("gfx1100w64.co", 64),
    ] {
        let path = built().path(n);
        let ours = codeobj::load(&path).unwrap();
        assert_eq!(ours.len(), 1);
        check(&ours[0], &readelf(&path));
        assert!(
            ours[0]
                .kernels
                .iter()
                .all(|k| k.meta.wavefront_size == wave),
            "{n}"
        );
    }
}

#[test]
fn host_executables() {
    let b = built();
    // One translation unit: .hip_fatbin holds one bundle; the oracle extracts the section with
    // llvm-objcopy and unbundles it with clang-offload-bundler.
    let app = b.path("app");
    let fat = b.path("app.hip_fatbin");
    run(Command::new("llvm-objcopy-19")
        .arg(format!("--dump-section=.hip_fatbin={}", fat.display()))
        .arg(&app)
        .arg(b.path("app.copy")));
    let oracle = oracle_bundle(&fat, &b.root);
    let ours = codeobj::load(&app).unwrap();
    assert_eq!(ours.len(), oracle.len());
    for (id, yaml) in &oracle {
        check(
            ours.iter()
                .find(|c| c.source.ends_with(&format!("#{id}")))
                .unwrap(),
            yaml,
        );
    }
    // Two translation units: two aligned bundles in .hip_fatbin; each must equal the code
    // object of its own translation unit compiled alone.
    let ours = codeobj::load(&b.path("app2")).unwrap();
    assert_eq!(
        ours.len(),
        2,
        "{:?}",
        ours.iter().map(|c| &c.source).collect::<Vec<_>>()
    );
    let alone: Vec<CodeObject> = ["gfx90a.hsaco", "rowsum.hsaco"]
        .iter()
        .flat_map(|n| codeobj::load(&b.path(n)).unwrap())
        .collect();
    for a in &alone {
        assert!(
            ours.iter().any(|o| o.metadata == a.metadata),
            "{}: not found in app2",
            a.source
        );
    }
}

#[test]
fn signature_compare_on_real_objects() {
    let b = built();
    let a = &codeobj::load(&b.path("gfx90a.hsaco")).unwrap()[0];
    let same = &codeobj::load(&b.path("gfx940.hsaco")).unwrap()[0];
    assert_eq!(
        codeobj::signature::compare(a, same),
        vec![],
        "same source, other target: same signatures"
    );
    let other = &codeobj::load(&b.path("rowsum.hsaco")).unwrap()[0];
    let d = codeobj::signature::compare(a, other);
    assert!(d.iter().any(|d| matches!(d, codeobj::signature::Difference::MissingKernel { kernel } if kernel == "plain")), "{d:?}");
    assert!(d.iter().any(|d| matches!(d, codeobj::signature::Difference::ExtraKernel { kernel } if kernel == "_Z6rowsumPKfPfi")), "{d:?}");
}

#[test]
fn truncated_real_inputs_are_errors_not_panics() {
    let b = built();
    for n in [
        "gfx90a.hsaco",
        "multi.hsaco",
        "ccob_v2_zstd.co",
        "gfx1100w32.co",
        "app",
    ] {
        let data = std::fs::read(b.path(n)).unwrap();
        // Every prefix length near the structure boundaries, and a spread over the file.
        let mut cuts: Vec<usize> = (0..200.min(data.len())).collect();
        cuts.extend((0..data.len()).step_by((data.len() / 300).max(1)));
        for cut in cuts {
            let _ = codeobj::read(&data[..cut], n);
        }
        assert!(
            codeobj::read(&data[..data.len() / 2], n).is_err(),
            "{n}: half a file must not parse"
        );
    }
}
