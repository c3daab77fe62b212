//! `check_source` as a library: report shape, messages, related locations, rule selection,
//! and robustness on malformed input.

use guards::{check_source, rules, Settings, Severity, Verdict};

const SRC: &str = r#"#define SYNC() __syncthreads()
__device__ void helper(int* c) { atomicAdd(c, 1); }
__global__ void k(float* a, int* c, int n) {
  #pragma unroll 4
  for (int i = 0; i < 16; ++i) {
    a[i] += 1.f;
    SYNC();
    if (a[i] > 3.f) break;
  }
  #pragma unroll
  for (int i = 0; i < n; ++i) helper(c);
  #pragma nounroll
  for (int i = 0; i < n; ++i) __syncthreads();
  for (int j = 0; j < 8; ++j) a[j] = 0.f;
  int lane = threadIdx.x & 31;
}
void host(float* a) { for (int i = 0; i < 4; ++i) a[i] = 0.f; }
"#;

fn run(settings: &Settings) -> (guards::FileReport, Vec<guards::Diagnostic>) {
    check_source("k.cu", SRC.as_bytes(), settings)
}

#[test]
fn report_shape() {
    let (r, _) = run(&Settings::default());
    assert_eq!(r.path, "k.cu");
    assert_eq!(r.parse_errors, 0);
    let names: Vec<&str> = r.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["helper", "k"], "host functions are not listed");
    let k = &r.functions[1];
    assert_eq!(k.line, 3);
    let ids: Vec<&str> = k.loops.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, vec!["k:0", "k:1", "k:2", "k:3"]);
    let l0 = &k.loops[0];
    assert_eq!((l0.line, l0.column, l0.trip_count), (5, 3, Some(16)));
    assert_eq!(l0.unroll_pragma.as_deref(), Some("unroll 4"));
    assert_eq!(l0.blockers, vec!["barrier", "early-exit"]);
    assert_eq!(l0.verdict, Verdict::Blocked);
    assert_eq!(k.loops[1].unroll_pragma.as_deref(), Some("unroll"));
    assert_eq!(k.loops[1].blockers, vec!["atomic"]);
    assert_eq!(k.loops[2].unroll_pragma.as_deref(), Some("nounroll"));
    assert_eq!(k.loops[3].verdict, Verdict::Candidate);
    assert!(k.loops[3].blockers.is_empty());
}

#[test]
fn diagnostics_cite_blockers_with_lines_and_related_locations() {
    let (_, d) = run(&Settings::default());
    let rules_lines: Vec<(&str, u32)> = d.iter().map(|d| (d.rule.as_str(), d.line)).collect();
    // The pragma lines (4 and 10) and the lane arithmetic (15); not the nounroll loop.
    assert_eq!(
        rules_lines,
        vec![
            ("unroll-blocked", 4),
            ("unroll-blocked", 10),
            ("wave-size", 15)
        ]
    );
    let first = &d[0];
    // A hint by default (issue 9: a compiler pragma over a barrier is correct code); wave-size
    // stays a warning.
    assert_eq!(first.severity, Severity::Hint);
    assert_eq!(d[2].severity, Severity::Warning);
    assert!(
        first.message.contains("#pragma unroll 4"),
        "{}",
        first.message
    );
    assert!(
        first.message.contains("barrier at line 7"),
        "{}",
        first.message
    );
    // The early exit is no concern of the compiler's pragma (issue 26): not cited.
    assert!(!first.message.contains("early-exit"), "{}", first.message);
    let rel: Vec<u32> = first.related.iter().map(|r| r.line).collect();
    assert_eq!(rel, vec![7]);
    assert!(
        first.related[0].label.contains("SYNC"),
        "{}",
        first.related[0].label
    );
    let second = &d[1];
    assert!(
        second
            .message
            .contains("`helper()`, which reaches `atomicAdd` (line 2)"),
        "{}",
        second.message
    );
    assert_eq!((d[2].line, d[2].column), (15, 14));
    assert_eq!(
        &SRC.as_bytes()[d[2].span.0..d[2].span.1],
        b"threadIdx.x & 31"
    );
}

#[test]
fn severity_is_configurable_per_rule() {
    let mut settings = Settings::default();
    settings
        .severity
        .insert("unroll-blocked".into(), Severity::Warning);
    settings
        .severity
        .insert("wave-size".into(), Severity::Error);
    let (_, d) = run(&settings);
    let got: Vec<(&str, Severity)> = d.iter().map(|d| (d.rule.as_str(), d.severity)).collect();
    assert_eq!(
        got,
        vec![
            ("unroll-blocked", Severity::Warning),
            ("unroll-blocked", Severity::Warning),
            ("wave-size", Severity::Error)
        ]
    );
}

#[test]
fn selection_and_hints() {
    let ignore_barrier = Settings {
        ignore: vec!["barrier".into()],
        ..Default::default()
    };
    let (r, d) = run(&ignore_barrier);
    assert_eq!(r.functions[1].loops[0].blockers, vec!["early-exit"]);
    assert_eq!(r.functions[1].loops[2].verdict, Verdict::Candidate);
    // The first loop is blocked by its early exit only: its pragma is the compiler's business.
    assert_eq!(d.iter().filter(|d| d.rule == "unroll-blocked").count(), 1);

    let only_atomic = Settings {
        select: Some(vec!["atomic".into()]),
        ..Default::default()
    };
    let (r, d) = run(&only_atomic);
    assert!(r.functions[1].loops[0].blockers.is_empty());
    assert_eq!(r.functions[1].loops[1].blockers, vec!["atomic"]);
    let rl: Vec<(&str, u32)> = d.iter().map(|d| (d.rule.as_str(), d.line)).collect();
    assert_eq!(
        rl,
        vec![("unroll-blocked", 10)],
        "selecting a blocker reports the pragmas it blocks"
    );

    let only_wave = Settings {
        select: Some(vec!["wave-size".into()]),
        ..Default::default()
    };
    let (r, d) = run(&only_wave);
    assert_eq!(
        r.functions[1].loops[0].blockers,
        vec!["barrier", "early-exit"],
        "blockers stay on"
    );
    assert!(d.iter().all(|d| d.rule == "wave-size") && d.len() == 1);

    let no_pragma_diag = Settings {
        ignore: vec!["unroll-blocked".into()],
        ..Default::default()
    };
    assert!(run(&no_pragma_diag)
        .1
        .iter()
        .all(|d| d.rule != "unroll-blocked"));

    let hints = Settings {
        hints: true,
        ..Default::default()
    };
    let (_, d) = run(&hints);
    let h: Vec<(u32, Severity)> = d
        .iter()
        .filter(|d| d.rule == "candidate")
        .map(|d| (d.line, d.severity))
        .collect();
    assert_eq!(h, vec![(14, Severity::Hint)]);
    assert!(run(&Settings::default())
        .1
        .iter()
        .all(|d| d.rule != "candidate"));
}

#[test]
fn registry_lookup_and_docs() {
    let ids: Vec<&str> = rules::all().iter().map(|r| r.id).collect();
    for id in [
        "barrier",
        "atomic",
        "dynamic-lds",
        "early-exit",
        "wave-size",
        "unroll-blocked",
        "candidate",
        "vgpr-pressure",
    ] {
        assert!(ids.contains(&id), "{id} not registered");
    }
    let wave = rules::lookup("wave-size").unwrap();
    assert_eq!(wave.severity, Severity::Warning);
    assert!(wave.doc().contains("## Fix safety"));
    assert_eq!(rules::lookup("candidate").unwrap().severity, Severity::Hint);
}

#[test]
fn malformed_inputs_never_panic() {
    let s = Settings {
        hints: true,
        ..Default::default()
    };
    let _ = check_source("empty.cu", b"", &s);
    let mut x: u64 = 7;
    let garbage: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let _ = check_source("garbage.cu", &garbage, &s);
    let mut nested = String::from("__global__ void k(int* c) {");
    for _ in 0..20_000 {
        nested.push_str("for(int i=0;i<2;++i){");
    }
    nested.push_str("atomicAdd(c, 1); return;");
    nested.push_str(&"}".repeat(20_001));
    let (r, _) = check_source("deep.cu", nested.as_bytes(), &s);
    let loops = &r.functions[0].loops;
    assert_eq!(loops.len(), 20_000);
    assert!(
        loops
            .iter()
            .all(|l| l.blockers == vec!["atomic", "early-exit"]),
        "innermost evidence reaches every level"
    );
    let unit = "__global__ void k(float* a) {\n#pragma unroll\n for (int i = 0; i < 8; ++i) { a[i] = 0.f; __syncthreads(); }\n}\n";
    let big = unit.repeat(4 * 1024 * 1024 / unit.len() + 1);
    let (r, d) = check_source("big.cu", big.as_bytes(), &s);
    assert_eq!(r.functions.len(), d.len());
    let invalid = b"__global__ void k\xff\xfe(int n) { for (int i = 0; i < n; ++i) { \xc3\x28 } }";
    let _ = check_source("bad-utf8.cu", invalid, &s);
}

#[test]
fn define_finding_ends_on_its_own_line() {
    // The directive node includes its newline; the finding must not run into the next line.
    let src = "#define WARP_SIZE 32\r\n__global__ void k(float* a) { a[0] = WARP_SIZE; }\n";
    let (_, d) = check_source("w.cu", src.as_bytes(), &Settings::default());
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0].rule.as_str(), d[0].line), ("wave-size", 1));
    assert_eq!(&src[d[0].span.0..d[0].span.1], "#define WARP_SIZE 32");
}

/// Dynamic-LDS evidence names the dynamic array itself: the declaration, a use, and a pointer
/// derived from it (never "declares dynamic shared memory" for the pointer); a pointer into a
/// static `__shared__` array is not dynamic at all.
#[test]
fn dynamic_lds_messages_name_the_dynamic_array() {
    let src = r#"extern __shared__ float smem[];
__global__ void k(float* out, int n) {
  __shared__ float tile[64];
  #pragma unroll 4
  for (int i = 0; i < n; ++i) {
    float* row = smem + i * 4;
    float* t = tile + i;
    row[0] = *t;
  }
  #pragma unroll 4
  for (int i = 0; i < n; ++i) out[i] = smem[i];
  float* st = tile + 4;
  #pragma unroll 4
  for (int i = 0; i < n; ++i) st[i] = 0.f;
}
"#;
    let (r, d) = check_source("k.cu", src.as_bytes(), &Settings::default());
    let blockers: Vec<Vec<String>> = r.functions[0]
        .loops
        .iter()
        .map(|l| l.blockers.clone())
        .collect();
    assert_eq!(
        blockers,
        vec![
            vec!["dynamic-lds".to_string()],
            vec!["dynamic-lds".into()],
            vec![]
        ]
    );
    let labels: Vec<&str> = d
        .iter()
        .flat_map(|d| d.related.iter().map(|r| r.label.as_str()))
        .collect();
    assert!(
        labels.contains(&"dynamic-lds: `row`, a pointer into dynamic shared memory `smem`"),
        "{labels:?}"
    );
    assert!(
        labels.contains(&"dynamic-lds: `smem` (dynamic shared memory)"),
        "{labels:?}"
    );
    assert!(
        !labels
            .iter()
            .any(|l| l.contains("`t`") || l.contains("tile")),
        "{labels:?}"
    );
}

/// The diagnostic sink, not the rules, applies suppressions and orders the diagnostics: an
/// `allow` trailing a loop's line silences the `unroll-blocked` that sits on its pragma (the
/// finding's other line), and two diagnostics at one position come in rule id order (a warp
/// reduction loop is both a `candidate` and a `wave-size` finding at its keyword).
#[test]
fn sink_applies_suppressions_and_orders_by_position_then_rule() {
    let src = r#"__global__ void k(float* a, float v, int n) {
  #pragma unroll 4
  for (int i = 0; i < n; ++i) { __syncthreads(); }  // hip-unroll: allow(unroll-blocked)
  #pragma unroll 4
  for (int i = 0; i < n; ++i) { __syncthreads(); }
  for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);
  a[0] = v;
}
"#;
    let hints = Settings {
        hints: true,
        ..Default::default()
    };
    let (r, d) = check_source("s.cu", src.as_bytes(), &hints);
    assert_eq!(r.functions[0].loops[0].blockers, vec!["barrier"]);
    let got: Vec<(&str, u32, u32)> = d
        .iter()
        .map(|d| (d.rule.as_str(), d.line, d.column))
        .collect();
    assert_eq!(
        got,
        vec![
            ("unroll-blocked", 4, 3),
            ("candidate", 6, 3),
            ("wave-size", 6, 3),
        ]
    );
    let file_allowed = format!("// hip-unroll: allow-file(wave-size)\n{src}");
    let (_, d) = check_source("s.cu", file_allowed.as_bytes(), &hints);
    assert!(d.iter().all(|d| d.rule != "wave-size"), "{d:?}");
    assert_eq!(d.iter().filter(|d| d.rule == "candidate").count(), 1);
}
