//! The rocprofv3 / rocprof command builder (exact argv per preset), the pass-splitting rule,
//! version parsing, and execution with a timeout on stand-in scripts.

use profiler::run::{self, build, preset_counters, split_passes, Invocation, Plan, Preset, Tool};
use std::path::PathBuf;

fn v3(version: &str) -> Tool {
    Tool::Rocprofv3 {
        program: "/opt/rocm/bin/rocprofv3".into(),
        version: Some(version.into()),
    }
}

fn plan(preset: Preset, arch: &str, regex: Option<&str>) -> Plan {
    Plan {
        counters: preset_counters(preset, arch),
        out_dir: "/tmp/prof".into(),
        kernel_regex: regex.map(str::to_string),
        app: vec!["./app".into(), "-n".into(), "3".into()],
    }
}

fn argvs(invs: &[Invocation]) -> Vec<Vec<String>> {
    invs.iter().map(|i| i.argv.clone()).collect()
}

fn sv(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

const HEAD: &str = "/opt/rocm/bin/rocprofv3 --kernel-trace --stats -f csv rocpd";

#[test]
fn preset_lightweight() {
    let got = argvs(&build(
        &v3("1.0.0"),
        &plan(Preset::Lightweight, "gfx90a", None),
    ));
    assert_eq!(
        got,
        vec![sv(&format!(
            "{HEAD} -d /tmp/prof/pass_1 -o run -- ./app -n 3"
        ))]
    );
}

#[test]
fn preset_kernel() {
    let got = argvs(&build(&v3("1.0.0"), &plan(Preset::Kernel, "gfx90a", None)));
    assert_eq!(got, vec![sv(&format!("{HEAD} -d /tmp/prof/pass_1 -o run --pmc SQ_WAVES SQ_BUSY_CYCLES GRBM_COUNT GRBM_GUI_ACTIVE -- ./app -n 3"))]);
}

#[test]
fn preset_compute() {
    // 20 SQ counters and one GRBM: SQ allows 8 per pass -> 3 passes.
    let got = argvs(&build(&v3("1.0.0"), &plan(Preset::Compute, "gfx90a", None)));
    assert_eq!(
        got,
        vec![
            sv(&format!("{HEAD} -d /tmp/prof/pass_1 -o run --pmc SQ_WAVES SQ_INSTS_VALU SQ_INSTS_SALU SQ_ACTIVE_INST_VALU GRBM_GUI_ACTIVE SQ_INSTS_VALU_ADD_F16 SQ_INSTS_VALU_MUL_F16 SQ_INSTS_VALU_FMA_F16 SQ_INSTS_VALU_TRANS_F16 -- ./app -n 3")),
            sv(&format!("{HEAD} -d /tmp/prof/pass_2 -o run --pmc SQ_INSTS_VALU_ADD_F32 SQ_INSTS_VALU_MUL_F32 SQ_INSTS_VALU_FMA_F32 SQ_INSTS_VALU_TRANS_F32 SQ_INSTS_VALU_ADD_F64 SQ_INSTS_VALU_MUL_F64 SQ_INSTS_VALU_FMA_F64 SQ_INSTS_VALU_TRANS_F64 -- ./app -n 3")),
            sv(&format!("{HEAD} -d /tmp/prof/pass_3 -o run --pmc SQ_INSTS_VALU_MFMA_MOPS_F16 SQ_INSTS_VALU_MFMA_MOPS_BF16 SQ_INSTS_VALU_MFMA_MOPS_F32 SQ_INSTS_VALU_MFMA_MOPS_F64 -- ./app -n 3")),
        ]
    );
}

#[test]
fn preset_memory_gfx90a() {
    // Six TCC counters, TCC allows 4 per pass: the EA write counters go to pass 2.
    let got = argvs(&build(&v3("1.0.0"), &plan(Preset::Memory, "gfx90a", None)));
    assert_eq!(
        got,
        vec![
            sv(&format!("{HEAD} -d /tmp/prof/pass_1 -o run --pmc TCC_HIT TCC_MISS TCC_EA_RDREQ TCC_EA_RDREQ_32B TCP_TOTAL_CACHE_ACCESSES TCP_TCC_READ_REQ TCP_TCC_WRITE_REQ SQ_INSTS_VMEM_RD SQ_INSTS_VMEM_WR SQ_INSTS_LDS SQ_LDS_BANK_CONFLICT GRBM_GUI_ACTIVE -- ./app -n 3")),
            sv(&format!("{HEAD} -d /tmp/prof/pass_2 -o run --pmc TCC_EA_WRREQ TCC_EA_WRREQ_64B -- ./app -n 3")),
        ]
    );
}

#[test]
fn preset_memory_gfx942_names() {
    let got = argvs(&build(&v3("1.0.0"), &plan(Preset::Memory, "gfx942", None)));
    assert_eq!(
        got,
        vec![
            sv(&format!("{HEAD} -d /tmp/prof/pass_1 -o run --pmc TCC_HIT TCC_MISS TCC_EA0_RDREQ TCC_EA0_RDREQ_32B TCP_TOTAL_CACHE_ACCESSES TCP_TCC_READ_REQ TCP_TCC_WRITE_REQ SQ_INSTS_VMEM_RD SQ_INSTS_VMEM_WR SQ_INSTS_LDS SQ_LDS_BANK_CONFLICT GRBM_GUI_ACTIVE -- ./app -n 3")),
            sv(&format!("{HEAD} -d /tmp/prof/pass_2 -o run --pmc TCC_EA0_WRREQ TCC_EA0_WRREQ_64B TCC_BUBBLE -- ./app -n 3")),
        ]
    );
}

#[test]
fn preset_full_with_kernel_regex() {
    let got = argvs(&build(
        &v3("1.0.0"),
        &plan(Preset::Full, "gfx90a", Some("vec.*")),
    ));
    let re = "--kernel-include-regex vec.*";
    assert_eq!(
        got,
        vec![
            sv(&format!("{HEAD} -d /tmp/prof/pass_1 -o run --pmc SQ_WAVES SQ_INSTS_VALU SQ_INSTS_SALU SQ_ACTIVE_INST_VALU GRBM_GUI_ACTIVE SQ_INSTS_VALU_ADD_F16 SQ_INSTS_VALU_MUL_F16 SQ_INSTS_VALU_FMA_F16 SQ_INSTS_VALU_TRANS_F16 TCC_HIT TCC_MISS TCC_EA_RDREQ TCC_EA_RDREQ_32B TCP_TOTAL_CACHE_ACCESSES TCP_TCC_READ_REQ TCP_TCC_WRITE_REQ {re} -- ./app -n 3")),
            sv(&format!("{HEAD} -d /tmp/prof/pass_2 -o run --pmc SQ_INSTS_VALU_ADD_F32 SQ_INSTS_VALU_MUL_F32 SQ_INSTS_VALU_FMA_F32 SQ_INSTS_VALU_TRANS_F32 SQ_INSTS_VALU_ADD_F64 SQ_INSTS_VALU_MUL_F64 SQ_INSTS_VALU_FMA_F64 SQ_INSTS_VALU_TRANS_F64 TCC_EA_WRREQ TCC_EA_WRREQ_64B {re} -- ./app -n 3")),
            sv(&format!("{HEAD} -d /tmp/prof/pass_3 -o run --pmc SQ_INSTS_VALU_MFMA_MOPS_F16 SQ_INSTS_VALU_MFMA_MOPS_BF16 SQ_INSTS_VALU_MFMA_MOPS_F32 SQ_INSTS_VALU_MFMA_MOPS_F64 SQ_INSTS_VMEM_RD SQ_INSTS_VMEM_WR SQ_INSTS_LDS SQ_LDS_BANK_CONFLICT {re} -- ./app -n 3")),
        ]
    );
}

#[test]
fn rocprofv3_before_rocpd_writes_csv_only() {
    // rocprofiler-sdk 0.x (ROCm 6.x) has no rocpd output format.
    let got = argvs(&build(
        &v3("0.6.0"),
        &plan(Preset::Lightweight, "gfx90a", None),
    ));
    assert_eq!(got, vec![sv("/opt/rocm/bin/rocprofv3 --kernel-trace --stats -f csv -d /tmp/prof/pass_1 -o run -- ./app -n 3")]);
    let unknown = Tool::Rocprofv3 {
        program: "rocprofv3".into(),
        version: None,
    };
    assert!(!unknown.supports_rocpd());
}

#[test]
fn legacy_rocprof_v1_syntax() {
    let tool = Tool::RocprofV1 {
        program: "/opt/rocm/bin/rocprof".into(),
    };
    let invs = build(&tool, &plan(Preset::Kernel, "gfx90a", None));
    assert_eq!(invs.len(), 1);
    assert_eq!(
        invs[0].argv,
        sv("/opt/rocm/bin/rocprof -i /tmp/prof/pass_1/input.txt --timestamp on --stats -d /tmp/prof/pass_1 -o /tmp/prof/pass_1/results.csv ./app -n 3")
    );
    assert_eq!(
        invs[0].input_file,
        Some((
            PathBuf::from("/tmp/prof/pass_1/input.txt"),
            "pmc: SQ_WAVES SQ_BUSY_CYCLES GRBM_COUNT GRBM_GUI_ACTIVE\n".to_string()
        ))
    );
    let light = build(&tool, &plan(Preset::Lightweight, "gfx90a", None));
    assert_eq!(light[0].argv, sv("/opt/rocm/bin/rocprof --timestamp on --stats -d /tmp/prof/pass_1 -o /tmp/prof/pass_1/results.csv ./app -n 3"));
    assert_eq!(light[0].input_file, None);
}

#[test]
fn pass_rule() {
    let c = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Nine SQ counters: 8 + 1. Three GRBM: 2 + 1. Duplicates removed.
    let sq: Vec<String> = (0..9).map(|i| format!("SQ_C{i}")).collect();
    let p = split_passes(&sq);
    assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), vec![8, 1]);
    let p = split_passes(&c(&[
        "GRBM_COUNT",
        "GRBM_GUI_ACTIVE",
        "GRBM_COUNT",
        "GRBM_SPI_BUSY",
        "TA_BUSY",
        "TA_X",
        "TA_Y",
    ]));
    assert_eq!(
        p,
        vec![
            c(&["GRBM_COUNT", "GRBM_GUI_ACTIVE", "TA_BUSY", "TA_X"]),
            c(&["GRBM_SPI_BUSY", "TA_Y"])
        ]
    );
    assert_eq!(run::block_of("TCC_EA0_RDREQ"), "TCC");
    assert_eq!(run::block_limit("TCC"), 4);
    assert_eq!(run::block_limit("SPI"), 6);
}

#[test]
fn version_parsing() {
    // `rocprofv3 --version` prints the version table as `{key:>16}: {value}` lines.
    let out = "         version: 1.0.0\n    git_revision: 5a0e6d1\n  rocm_version: 7.0.0\n";
    assert_eq!(run::parse_version(out), Some("1.0.0".to_string()));
    assert_eq!(run::parse_version("rocprofv3: unrecognized option"), None);
}

fn script(dir: &std::path::Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn which_finds_executables_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = std::ffi::OsString::from(dir.path());
    assert_eq!(run::which("rocprofv3", Some(&path)), None);
    std::fs::write(dir.path().join("rocprofv3"), "not executable").unwrap();
    assert_eq!(run::which("rocprofv3", Some(&path)), None);
    let s = script(dir.path(), "rocprof", "exit 0");
    assert_eq!(run::which("rocprof", Some(&path)), Some(s));
}

#[test]
fn execute_timeout_and_failure() {
    let dir = tempfile::tempdir().unwrap();
    let slow = script(dir.path(), "slow", "sleep 30");
    let inv = Invocation {
        argv: vec![slow.to_string_lossy().into()],
        dir: dir.path().join("p1"),
        input_file: Some((dir.path().join("p1/input.txt"), "pmc: SQ_WAVES\n".into())),
    };
    let t0 = std::time::Instant::now();
    let e = run::execute(&inv, std::time::Duration::from_millis(300)).unwrap_err();
    assert!(matches!(e, profiler::Error::Timeout { .. }), "{e}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("p1/input.txt")).unwrap(),
        "pmc: SQ_WAVES\n"
    );
    let bad = script(
        dir.path(),
        "bad",
        "echo 'ROCPROFILER: counter FOO not found' >&2; exit 3",
    );
    let inv = Invocation {
        argv: vec![bad.to_string_lossy().into()],
        dir: dir.path().join("p2"),
        input_file: None,
    };
    let e = run::execute(&inv, std::time::Duration::from_secs(20)).unwrap_err();
    assert!(
        matches!(e, profiler::Error::ProfilerFailed { .. })
            && e.to_string().contains("counter FOO not found"),
        "{e}"
    );
}

#[test]
fn first_gpu_skips_the_cpu_agent() {
    assert_eq!(
        run::first_gpu("gfx000\n  gfx90a\ngfx90a\n").as_deref(),
        Some("gfx90a")
    );
    assert_eq!(run::first_gpu("gfx000\n"), None);
    assert_eq!(run::first_gpu(""), None);
    assert_eq!(
        run::first_gpu("warning: no driver\ngfx1100\n").as_deref(),
        Some("gfx1100")
    );
}

#[test]
fn local_arch_asks_the_enumerator() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("rocm_agent_enumerator");
    std::fs::write(&fake, "#!/bin/sh\nprintf 'gfx000\\ngfx942\\n'\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run::local_arch_from(&fake).as_deref(), Some("gfx942"));
    // Missing enumerator: unknown, not an error.
    assert_eq!(run::local_arch_from(&dir.path().join("missing")), None);
}
