//! `tune` and `unroll` apply one safety policy: over every fixture (`testdata/check/**` and
//! `testdata/transforms/**`, `*.cu`), the tuner's discovery builds a variant for exactly the
//! loops, factors and modes the `pipeline` crate (what `unroll` calls) gives one for, with the
//! same bytes, refuses the others with the pipeline's refusal id, and reports `blocked` every
//! loop `check` calls blocked.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use pipeline::{LoopLoc, LoopRef, Mode, Policy, Source};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tuner::discover::{self, LoopInfo};

const FACTORS: [u32; 3] = [2, 4, 8];
const MODES: [Mode; 2] = [Mode::Pragma, Mode::Manual];

fn cu_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cu_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "cu") {
            out.push(p);
        }
    }
}

/// What the tuner does with one variant of a loop: `Ok` = built (its bytes), `Err` = the reason
/// id (`blocked` for a loop reported blocked, never built).
type Outcome = Result<Vec<u8>, String>;

fn tuner_outcome(l: &LoopInfo, source: &Source, factor: u32, mode: Mode) -> Outcome {
    if l.blocked {
        return Err("blocked".into());
    }
    discover::rewrite(l, source, &[], factor, mode)
        .map(|r| r.source)
        .map_err(|r| r.id)
}

fn pipeline_outcome(s: &Source, loc: LoopLoc, factor: u32, mode: Mode) -> Outcome {
    match s.variant(loc, factor, mode, Policy::default()) {
        Ok(v) => Ok(v.source),
        Err(pipeline::Error::Refused { refusal, .. }) if refusal.id() == "guard-blocked" => {
            Err("blocked".into())
        }
        Err(pipeline::Error::Refused { refusal, .. }) => Err(refusal.id().into()),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn tune_builds_exactly_what_unroll_would_and_blocks_what_check_blocks() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let testdata = std::fs::canonicalize(testdata).unwrap();
    let mut files = Vec::new();
    cu_files(&testdata.join("check"), &mut files);
    cu_files(&testdata.join("transforms"), &mut files);
    assert!(files.len() >= 100, "found only {} fixtures", files.len());
    // The tuner's own entry point, over the two fixture trees.
    let disc = discover::discover(
        &testdata,
        &[PathBuf::from("check"), PathBuf::from("transforms")],
        &[],
    )
    .unwrap();

    // Counts of outcomes, so that the test is known to cover every kind.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut check_blocked = 0;
    for path in &files {
        let rel = path.strip_prefix(&testdata).unwrap();
        let name = rel.display().to_string();
        let bytes = std::fs::read(path).unwrap();
        // `unroll`'s view: its own parse of the file.
        let unroll = Source::new(bytes.clone());
        let tuned = disc.file(rel);
        let tuner_loops: Vec<&LoopInfo> =
            tuned.map(|f| f.loops.iter().collect()).unwrap_or_default();
        if let Some(f) = tuned {
            assert_eq!(f.source.bytes(), &bytes[..], "{name}");
        }
        // Every loop `unroll` knows is listed by the tuner, under the same identity, and the
        // tuner lists nothing else.
        let listed = unroll.loops();
        assert_eq!(
            tuner_loops
                .iter()
                .map(|l| (l.loc, l.id.clone(), l.line))
                .collect::<Vec<_>>(),
            listed
                .iter()
                .map(|l| (l.loc, l.id.clone(), l.line))
                .collect::<Vec<_>>(),
            "{name}: the tuner lists other loops than the pipeline"
        );
        for l in &tuner_loops {
            let tuner_source = &tuned.unwrap().source;
            for mode in MODES {
                for factor in FACTORS {
                    let t = tuner_outcome(l, tuner_source, factor, mode);
                    let p = pipeline_outcome(&unroll, l.loc, factor, mode);
                    let what = |o: &Outcome| match o {
                        Ok(_) => "built".to_string(),
                        Err(id) => id.clone(),
                    };
                    assert_eq!(
                        what(&t),
                        what(&p),
                        "{name}: {} ({mode:?} x{factor}): the tuner and unroll disagree",
                        l.id
                    );
                    assert!(t == p, "{name}: {} ({mode:?} x{factor}): other bytes", l.id);
                    *counts.entry(what(&t)).or_default() += 1;
                }
            }
        }
        // Every loop `check` reports is the tuner's loop of the same id and line (the ids of
        // tune's reports are those of `check --format json`), and every loop it calls blocked
        // is reported blocked by the tuner, with check's blockers among its own.
        let (report, _) = guards::check_source(&name, &bytes, &guards::Settings::default());
        let mut check_loops = 0;
        for cl in report.functions.iter().flat_map(|f| &f.loops) {
            check_loops += 1;
            let loc = unroll
                .resolve(&cl.id.parse::<LoopRef>().unwrap())
                .unwrap_or_else(|e| panic!("{name}: {} does not resolve: {e}", cl.id));
            let t = tuner_loops
                .iter()
                .find(|l| l.loc == loc)
                .unwrap_or_else(|| panic!("{name}: the tuner does not list {}", cl.id));
            assert_eq!(t.id.to_string(), cl.id, "{name}");
            assert_eq!(t.line, cl.line, "{name}: {}", cl.id);
            if cl.verdict != guards::Verdict::Blocked {
                continue;
            }
            check_blocked += 1;
            assert!(
                t.blocked,
                "{name}: check blocks {}, the tuner does not",
                cl.id
            );
            // check's blockers are the tuner's, in the same order (the tuner may know more:
            // an `allow(...)` comment quiets the lint, never the rewrite policy).
            let shared: Vec<&String> = t
                .blockers
                .iter()
                .filter(|r| cl.blockers.contains(r))
                .collect();
            assert_eq!(
                shared,
                cl.blockers.iter().collect::<Vec<_>>(),
                "{name}: {}: check's blockers missing from the tuner's {:?}",
                cl.id,
                t.blockers
            );
        }
        assert_eq!(check_loops, tuner_loops.len(), "{name}");
    }
    // The fixtures exercise every kind of outcome: built, blocked, the author's pragma, and
    // the transform's own refusals.
    let n = |k: &str| counts.get(k).copied().unwrap_or(0);
    assert!(n("built") > 100, "{counts:?}");
    assert!(n("blocked") > 50, "{counts:?}");
    assert!(n("user-pragma") > 0, "{counts:?}");
    assert!(
        counts
            .keys()
            .any(|k| !["built", "blocked", "user-pragma"].contains(&k.as_str())),
        "{counts:?}"
    );
    assert!(check_blocked > 10, "{check_blocked}");
    eprintln!(
        "{} fixtures, {check_blocked} loops blocked by check, outcomes {counts:?}",
        files.len()
    );
}
