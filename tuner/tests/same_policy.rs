//! `tune` and `unroll` apply one safety policy: over every fixture (`testdata/check/**` and
//! `testdata/transforms/**`, `*.cu`), the tuner's discovery builds a variant for exactly the
//! loops, factors and modes the `pipeline` crate (what `unroll` calls) gives one for, with the
//! same bytes, refuses the others with the pipeline's refusal id, and reports `blocked` every
//! loop `check` calls blocked; and after an accepted edit (the edit-history path), the tuner
//! builds for every other loop what `unroll` builds on the edited file.
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
    // The tuner's own entry point, over the two fixture trees, each file in its translation
    // unit (the same search path and one header cache for the three views).
    let includes = pipeline::Includes::default();
    let disc = discover::discover(
        &testdata,
        &[PathBuf::from("check"), PathBuf::from("transforms")],
        &[],
        &includes,
    )
    .unwrap();
    let check_settings = guards::Settings {
        includes: Some(includes.clone()),
        ..Default::default()
    };

    // Counts of outcomes, so that the test is known to cover every kind.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut check_blocked = 0;
    for path in &files {
        let rel = path.strip_prefix(&testdata).unwrap();
        let name = rel.display().to_string();
        let bytes = std::fs::read(path).unwrap();
        // `unroll`'s view: its own parse of the file, in its unit.
        let unroll = Source::open(path, bytes.clone(), &includes);
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
        let (report, _) = guards::check_source(&path.to_string_lossy(), &bytes, &check_settings);
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

/// The edit-history path: once a variant of one loop is accepted, the tuner rewrites the other
/// loops in the edited file, finding each through the accepted edits (`discover::rewrite` with a
/// history). That must be what `unroll` does on the edited file to the same loop, named by the
/// id `unroll` says it has now (`Source::renumbering`, the ids an unroll prints as moved); the
/// rewritten loop and the loops inside it are refused `rewritten`.
#[test]
fn after_an_accepted_edit_tune_builds_what_unroll_would_on_the_edited_file() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let testdata = std::fs::canonicalize(testdata).unwrap();
    let includes = pipeline::Includes::default();
    let disc =
        discover::discover(&testdata, &[PathBuf::from("transforms")], &[], &includes).unwrap();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let (mut files, mut moved_ids) = (0, 0);
    for f in disc.files.iter() {
        let name = f.rel.display().to_string();
        // The first loop with a manual x2 variant (a manual unroll adds loops: ids move) is
        // the accepted edit; then every other loop is rewritten after it.
        let Some((first, accepted)) = f.loops.iter().find_map(|l| {
            (!l.blocked)
                .then(|| discover::rewrite(l, &f.source, &[], 2, Mode::Manual).ok())
                .flatten()
                .map(|r| (l, r))
        }) else {
            continue;
        };
        files += 1;
        let history = vec![accepted.edits.clone()];
        // `unroll`'s view of the edited file: its own parse, ids renumbered as it prints them.
        // As the tuner does: the rewritten text keeps the original's translation unit.
        let edited = Source::with_unit(accepted.source.clone(), f.source.unit().clone());
        let variant = f
            .source
            .variant(first.loc, 2, Mode::Manual, Policy::default())
            .unwrap();
        assert_eq!(variant.source, accepted.source, "{name}");
        let renumbering = f.source.renumbering(first.loc, &variant);
        moved_ids += renumbering.moved.len();
        let span = f.source.file().functions[first.loc.function].loops[first.loc.index].span;
        for l in &f.loops {
            let inside = span.start <= l.offset && l.offset < span.end;
            for mode in MODES {
                for factor in FACTORS {
                    let t = if l.blocked {
                        Err("blocked".to_string())
                    } else {
                        discover::rewrite(l, &edited, &history, factor, mode)
                            .map(|r| r.source)
                            .map_err(|r| r.id)
                    };
                    if inside {
                        if !l.blocked {
                            assert_eq!(t, Err("rewritten".into()), "{name}: {}", l.id);
                        }
                        *counts.entry("rewritten".into()).or_default() += 1;
                        continue;
                    }
                    let id = renumbering
                        .moved
                        .iter()
                        .find(|(old, _)| *old == l.id)
                        .map_or(l.id.clone(), |(_, new)| new.clone());
                    let loc = edited
                        .resolve(&id.to_string().parse::<LoopRef>().unwrap())
                        .unwrap_or_else(|e| panic!("{name}: {id} does not resolve: {e}"));
                    let p = pipeline_outcome(&edited, loc, factor, mode);
                    let what = |o: &Outcome| match o {
                        Ok(_) => "built".to_string(),
                        Err(id) => id.clone(),
                    };
                    assert_eq!(
                        what(&t),
                        what(&p),
                        "{name}: {} (now {id}, {mode:?} x{factor}) after the edit of {}",
                        l.id,
                        first.id
                    );
                    assert!(t == p, "{name}: {} ({mode:?} x{factor}): other bytes", l.id);
                    *counts.entry(what(&t)).or_default() += 1;
                }
            }
        }
    }
    let n = |k: &str| counts.get(k).copied().unwrap_or(0);
    assert!(files > 20, "{files} files with an accepted edit");
    assert!(n("built") > 50 && n("rewritten") > 0, "{counts:?}");
    assert!(
        moved_ids > 0,
        "no fixture moves an id: the renumbering is not exercised"
    );
    eprintln!("{files} files, {moved_ids} moved ids, outcomes after an edit {counts:?}");
}
