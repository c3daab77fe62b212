//! The pipeline as the tuner uses it: every loop listed with its identity, verdict, blockers and
//! pragma; variants or typed refusals; and the safety property over every fixture of the
//! repository: loop ids are unique per file, and every loop `check` calls blocked is refused.

use pipeline::{Error, LoopRef, Mode, Policy, Refusal, Source};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const ISSUE9: &str = "namespace a { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } } }
namespace b { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { __syncthreads(); x[i] += 1.0f; } } }
__global__ void over(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } }
__global__ void over(int* x, int n) { for (int i = 0; i < n; ++i) { atomicAdd(x, 1); } }
";

#[test]
fn loops_are_listed_with_identity_verdict_and_blockers() {
    let s = Source::new(ISSUE9.as_bytes().to_vec());
    let loops = s.loops();
    let got: Vec<(String, u32, &str, Vec<&str>)> = loops
        .iter()
        .map(|l| {
            (
                l.id.to_string(),
                l.line,
                if l.rewritable() { "ok" } else { "no" },
                l.blockers.iter().map(|b| b.rule).collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("a::k:0".into(), 1, "ok", vec![]),
            ("b::k:0".into(), 2, "no", vec!["barrier"]),
            ("over(float*, int):0".into(), 3, "ok", vec![]),
            ("over(int*, int):0".into(), 4, "no", vec!["atomic"]),
        ]
    );
    let json = serde_json::to_value(&loops[1]).unwrap();
    assert_eq!(json["id"], "b::k:0");
    assert_eq!(json["blockers"][0]["what"], "`__syncthreads()`");
}

#[test]
fn loops_carry_depth_height_and_keyword_offset() {
    let src = "__global__ void k(float* x, int n) {
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      for (int c = 0; c < 4; ++c) { x[c] += 1.0f; }
    }
    for (int d = 0; d < n; ++d) { x[d] = 0; }
  }
  while (n > 0) { --n; }
}
";
    let s = Source::new(src.as_bytes().to_vec());
    let got: Vec<(String, u32, u32, &str)> = s
        .loops()
        .iter()
        .map(|l| {
            let line = src.lines().nth(l.line as usize - 1).unwrap();
            let col = l.column as usize - 1;
            // The offset is the keyword's, in this text, on the loop's line and column.
            assert_eq!(&src[l.offset - col..][..line.len()], line, "{}", l.id);
            let at = &src[l.offset..];
            let kw = if at.starts_with("for") {
                "for"
            } else if at.starts_with("while") {
                "while"
            } else {
                "?"
            };
            (l.id.to_string(), l.depth, l.height, kw)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("k:0".into(), 0, 2, "for"),
            ("k:1".into(), 1, 1, "for"),
            ("k:2".into(), 2, 0, "for"),
            ("k:3".into(), 1, 0, "for"),
            ("k:4".into(), 0, 0, "while"),
        ]
    );
}

fn refusal_id(e: Error) -> &'static str {
    match e {
        Error::Refused { refusal, .. } => refusal.id(),
        other => panic!("{other}"),
    }
}

#[test]
fn variants_or_typed_refusals() {
    let s = Source::new(ISSUE9.as_bytes().to_vec());
    let b = s.resolve(&"b::k:0".parse::<LoopRef>().unwrap()).unwrap();
    for mode in [Mode::Pragma, Mode::Manual] {
        let e = s.variant(b, 4, mode, Policy::default()).unwrap_err();
        assert_eq!(refusal_id(e), "guard-blocked");
    }
    let v = s
        .variant(b, 4, Mode::Pragma, Policy { force: true })
        .unwrap();
    assert_eq!(v.loop_id, "b::k:0");
    let a = s.resolve(&LoopRef::Line(1)).unwrap();
    let all = s.variants(a, &[1, 2, 4], Policy::default());
    assert_eq!(all.len(), 5);
    assert!(all.iter().all(|(_, _, r)| r.is_ok()));
    // A full unroll (`pipeline::FULL`) is the transform's to refuse: `n` is no constant.
    let e = s
        .variant(a, pipeline::FULL, Mode::Pragma, Policy::default())
        .unwrap_err();
    assert_eq!(refusal_id(e), "not-constant-trip");
}

#[test]
fn user_decision_pragmas_and_transform_refusals() {
    let src = "__global__ void k(float* a, int n) {\n  #pragma clang loop unroll_count(2)\n  for (int i = 0; i < n; ++i) a[i] = 0;\n  for (int i = 0; i < n; ++i) { a[i] = 1; i += 1; }\n}\n";
    let s = Source::new(src.as_bytes().to_vec());
    let l = s.loops();
    let p = l[0].pragma.as_ref().unwrap();
    assert!(
        p.user_decision && p.text == "#pragma clang loop unroll_count(2)" && p.hint == "unroll 2"
    );
    assert!(!l[0].rewritable());
    let e = s
        .variant(l[0].loc, 4, Mode::Pragma, Policy::default())
        .unwrap_err();
    assert_eq!(refusal_id(e), "user-pragma");
    // A bare `#pragma unroll` (full unroll) is the author's decision too; `unroll 4` is not.
    for (pragma, decision) in [("#pragma unroll", true), ("#pragma unroll 4", false)] {
        let src = format!("__global__ void k(float* a) {{\n  {pragma}\n  for (int i = 0; i < 16; ++i) a[i] = 0;\n}}\n");
        let s = Source::new(src.into_bytes());
        let l = &s.loops()[0];
        assert_eq!(
            l.pragma.as_ref().unwrap().user_decision,
            decision,
            "{pragma}"
        );
        for mode in [Mode::Pragma, Mode::Manual] {
            let r = s.variant(l.loc, 2, mode, Policy::default());
            match r {
                Err(e) => {
                    assert!(decision, "{pragma}: {e}");
                    assert_eq!(refusal_id(e), "user-pragma");
                }
                Ok(_) => assert!(!decision, "{pragma} {mode:?} was replaced"),
            }
            assert!(s.variant(l.loc, 2, mode, Policy { force: true }).is_ok());
        }
    }
    assert!(s
        .variant(l[0].loc, 4, Mode::Pragma, Policy { force: true })
        .is_ok());
    // The transform's own refusal is never overridden.
    for force in [false, true] {
        let e = s
            .variant(l[1].loc, 2, Mode::Manual, Policy { force })
            .unwrap_err();
        match &e {
            Error::Refused {
                refusal: Refusal::Transform(_),
                ..
            } => {}
            other => panic!("{other}"),
        }
        assert_eq!(refusal_id(e), "writes-induction-variable");
    }
}

fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fixtures(&p, out);
        } else if p.extension().is_some_and(|x| {
            ["cu", "hip", "cuh", "cc", "cpp", "h"]
                .iter()
                .any(|e| x == *e)
        }) {
            out.push(p);
        }
    }
}

/// Over every fixture of the repository: the ids `check` prints are unique per file and name
/// the loop on the reported line; `unroll` (the pipeline, in both modes, several factors)
/// refuses every loop `check` reports blocked, also when the lint's own settings turn every
/// blocker off.
#[test]
fn ids_are_unique_and_every_blocked_loop_is_refused_on_every_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut files = Vec::new();
    fixtures(&root, &mut files);
    assert!(files.len() >= 100, "found only {} fixtures", files.len());
    let lenient = guards::Settings {
        ignore: ["barrier", "atomic", "dynamic-lds", "early-exit"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    let (mut loops, mut blocked) = (0, 0);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display().to_string();
        let (report, _) = guards::check_source(&name, &bytes, &guards::Settings::default());
        let src = Source::new(bytes.clone());
        let mut seen = HashSet::new();
        for l in report.functions.iter().flat_map(|f| &f.loops) {
            loops += 1;
            assert!(seen.insert(l.id.clone()), "{name}: duplicate id {}", l.id);
            let loc = src
                .resolve(&l.id.parse::<LoopRef>().unwrap())
                .unwrap_or_else(|e| panic!("{name}: {} does not resolve: {e}", l.id));
            assert_eq!(src.info(loc).line, l.line, "{name}: {}", l.id);
            if l.verdict != guards::Verdict::Blocked {
                continue;
            }
            blocked += 1;
            for mode in [Mode::Pragma, Mode::Manual] {
                for factor in [2, 4] {
                    match src.variant(loc, factor, mode, Policy::default()) {
                        Err(Error::Refused {
                            refusal: Refusal::GuardBlocked { blockers },
                            ..
                        }) => {
                            let rules: HashSet<&str> = blockers.iter().map(|b| b.rule).collect();
                            for r in &l.blockers {
                                assert!(rules.contains(r.as_str()), "{name}: {} lost {r}", l.id);
                            }
                        }
                        other => panic!("{name}: blocked loop {} gave {other:?}", l.id),
                    }
                }
            }
        }
        // The lint turned lenient: the rewrite policy is not.
        let (lenient_report, _) = guards::check_source(&name, &bytes, &lenient);
        for (strict, lax) in report
            .functions
            .iter()
            .flat_map(|f| &f.loops)
            .zip(lenient_report.functions.iter().flat_map(|f| &f.loops))
        {
            assert_eq!(strict.id, lax.id);
            if strict.verdict == guards::Verdict::Blocked {
                let loc = src.resolve(&strict.id.parse::<LoopRef>().unwrap()).unwrap();
                assert!(src.policy_refusal(loc, Policy::default()).is_some());
            }
        }
        // Ids from the whole parse (every function) are unique too.
        let all: Vec<String> = src
            .file()
            .all_loops()
            .map(|(loc, _, _)| src.file().loop_id(loc).to_string())
            .collect();
        let set: HashSet<&String> = all.iter().collect();
        assert_eq!(set.len(), all.len(), "{name}");
    }
    assert!(
        loops > 300 && blocked > 100,
        "{loops} loops, {blocked} blocked"
    );
}
