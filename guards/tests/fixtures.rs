//! Fixture tests: every `testdata/check/**/*.cu` is checked against the expectations written
//! beside its lines (see `testdata/check/README.md`). One test runs them all and reports every
//! failing fixture by name with each mismatch.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
struct Expect {
    /// line -> expected sorted blockers of the loop(s) starting on that line.
    loops: BTreeMap<u32, Vec<String>>,
    /// (line, rule) of each expected diagnostic.
    diags: Vec<(u32, String)>,
    /// line -> expected constant trip count (`None` for `trip: ?`) of the loop on that line.
    trips: BTreeMap<u32, Option<u64>>,
    /// line -> expected sorted `unresolved` calls of the loop on that line (none when absent).
    unresolved: BTreeMap<u32, Vec<String>>,
    /// line -> expected unroll pragma of the loop on that line (`unroll 8`, `nounroll`;
    /// `None` for `pragma: none`), checked only where annotated.
    pragmas: BTreeMap<u32, Option<String>>,
    /// `// hip-unroll-test: include-dir DIR` (relative to the fixture's directory).
    include_dirs: Vec<String>,
    hints: bool,
    /// `// hip-unroll-test: parse-errors N`: the file's parse errors, exactly.
    parse_errors: Option<usize>,
}

/// Reads `// ~^ blockers: a, b`, `// ~ diag: rule`, `// ~^^ blockers: none` annotations.
fn expectations(src: &str) -> Result<Expect, String> {
    let mut e = Expect::default();
    for (i, line) in src.lines().enumerate() {
        let lineno = i as u32 + 1;
        if line.contains("hip-unroll-test: hints") {
            e.hints = true;
        }
        if let Some(d) = line.split("hip-unroll-test: include-dir ").nth(1) {
            e.include_dirs.push(d.trim().to_string());
        }
        if let Some(n) = line.split("hip-unroll-test: parse-errors ").nth(1) {
            e.parse_errors = Some(
                n.trim()
                    .parse()
                    .map_err(|_| format!("line {lineno}: `parse-errors` wants a number"))?,
            );
        }
        let Some(pos) = line.find("// ~") else {
            continue;
        };
        let rest = &line[pos + 4..];
        let carets = rest.chars().take_while(|c| *c == '^').count() as u32;
        let rest = rest[carets as usize..].trim();
        let target = lineno
            .checked_sub(carets)
            .filter(|l| *l > 0)
            .ok_or(format!("line {lineno}: annotation points before line 1"))?;
        if let Some(b) = rest.strip_prefix("blockers:") {
            let mut v: Vec<String> = b
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty() && s != "none")
                .collect();
            v.sort();
            if e.loops.insert(target, v).is_some() {
                return Err(format!(
                    "line {lineno}: two `blockers:` annotations for line {target}"
                ));
            }
        } else if let Some(r) = rest.strip_prefix("diag:") {
            for rule in r.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                e.diags.push((target, rule.to_string()));
            }
        } else if let Some(u) = rest.strip_prefix("unresolved:") {
            let mut v: Vec<String> = u
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            v.sort();
            if e.unresolved.insert(target, v).is_some() {
                return Err(format!(
                    "line {lineno}: two `unresolved:` annotations for line {target}"
                ));
            }
        } else if let Some(p) = rest.strip_prefix("pragma:") {
            let p = p.trim();
            let want = (p != "none").then(|| p.to_string());
            if e.pragmas.insert(target, want).is_some() {
                return Err(format!(
                    "line {lineno}: two `pragma:` annotations for line {target}"
                ));
            }
        } else if let Some(t) = rest.strip_prefix("trip:") {
            let t = t.trim();
            let want = match t {
                "?" => None,
                n => Some(
                    n.parse::<u64>()
                        .map_err(|_| format!("line {lineno}: bad trip count `{n}`"))?,
                ),
            };
            if e.trips.insert(target, want).is_some() {
                return Err(format!(
                    "line {lineno}: two `trip:` annotations for line {target}"
                ));
            }
        } else {
            return Err(format!(
                "line {lineno}: unknown annotation `{rest}` (want `blockers:`, `diag:`, `trip:`, `pragma:` or `unresolved:`)"
            ));
        }
    }
    Ok(e)
}

fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // `headers/` directories hold what the fixtures include, not fixtures.
            if p.file_name().is_some_and(|n| n != "headers") {
                fixtures(&p, out);
            }
        } else if p
            .extension()
            .is_some_and(|x| x == "cu" || x == "hip" || x == "cuh")
        {
            out.push(p);
        }
    }
}

fn run_fixture(
    path: &Path,
    cache: &std::sync::Arc<frontend::tu::HeaderCache>,
) -> Result<(), Vec<String>> {
    let src = std::fs::read_to_string(path).map_err(|e| vec![e.to_string()])?;
    let exp = expectations(&src).map_err(|e| vec![e])?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let dirs = exp.include_dirs.iter().map(|d| dir.join(d)).collect();
    let settings = guards::Settings {
        hints: exp.hints,
        includes: Some(frontend::tu::Includes::new(dirs, cache.clone())),
        ..Default::default()
    };
    let (report, diags) = guards::check_source(&path.to_string_lossy(), src.as_bytes(), &settings);
    let mut errs = Vec::new();
    if exp.loops.is_empty() && exp.diags.is_empty() {
        errs.push("fixture has no expectations".to_string());
    }
    if let Some(want) = exp.parse_errors {
        if report.parse_errors != want {
            errs.push(format!(
                "{} parse errors, expected {want}",
                report.parse_errors
            ));
        }
    }
    let mut seen_lines = BTreeSet::new();
    for f in &report.functions {
        for l in &f.loops {
            seen_lines.insert(l.line);
            match exp.loops.get(&l.line) {
                None => errs.push(format!(
                    "line {}: loop {} has no `blockers:` annotation (got {:?})",
                    l.line, l.id, l.blockers
                )),
                Some(want) if *want != l.blockers => errs.push(format!(
                    "line {}: loop {} blockers {:?}, expected {:?}",
                    l.line, l.id, l.blockers, want
                )),
                _ => {}
            }
            let want = exp.unresolved.get(&l.line).cloned().unwrap_or_default();
            if want != l.unresolved {
                errs.push(format!(
                    "line {}: loop {} unresolved {:?}, expected {:?}",
                    l.line, l.id, l.unresolved, want
                ));
            }
            if let Some(want) = exp.pragmas.get(&l.line) {
                if *want != l.unroll_pragma {
                    errs.push(format!(
                        "line {}: loop {} pragma {:?}, expected {:?}",
                        l.line, l.id, l.unroll_pragma, want
                    ));
                }
            }
            if let Some(want) = exp.trips.get(&l.line) {
                if *want != l.trip_count {
                    errs.push(format!(
                        "line {}: loop {} trip count {:?}, expected {:?}",
                        l.line, l.id, l.trip_count, want
                    ));
                }
            }
        }
    }
    for line in exp.trips.keys() {
        if !seen_lines.contains(line) {
            errs.push(format!(
                "line {line}: `trip:` annotation but no reported loop starts there"
            ));
        }
    }
    for line in exp.pragmas.keys() {
        if !seen_lines.contains(line) {
            errs.push(format!(
                "line {line}: `pragma:` annotation but no reported loop starts there"
            ));
        }
    }
    for line in exp.unresolved.keys() {
        if !seen_lines.contains(line) {
            errs.push(format!(
                "line {line}: `unresolved:` annotation but no reported loop starts there"
            ));
        }
    }
    for line in exp.loops.keys() {
        if !seen_lines.contains(line) {
            errs.push(format!(
                "line {line}: `blockers:` annotation but no reported loop starts there"
            ));
        }
    }
    let mut got: Vec<(u32, String)> = diags.iter().map(|d| (d.line, d.rule.clone())).collect();
    got.sort();
    let mut want = exp.diags.clone();
    want.sort();
    for w in &want {
        if let Some(i) = got.iter().position(|g| g == w) {
            got.remove(i);
        } else {
            errs.push(format!(
                "line {}: expected a `{}` diagnostic, none there",
                w.0, w.1
            ));
        }
    }
    for g in &got {
        let msg = diags
            .iter()
            .find(|d| d.line == g.0 && d.rule == g.1)
            .map(|d| d.message.as_str())
            .unwrap_or("");
        errs.push(format!(
            "line {}: unexpected `{}` diagnostic: {msg}",
            g.0, g.1
        ));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/check")
}

#[test]
fn check_fixtures() {
    let root = root();
    let mut files = Vec::new();
    fixtures(&root, &mut files);
    assert!(
        files.len() >= 20,
        "expected the fixture corpus under {}, found {} files",
        root.display(),
        files.len()
    );
    let mut failures = Vec::new();
    // One header cache for the whole run, as `check` has.
    let cache = std::sync::Arc::new(frontend::tu::HeaderCache::new());
    for f in &files {
        if let Err(errs) = run_fixture(f, &cache) {
            let name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            failures.push(format!("{name}:\n  {}", errs.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_has_flagged_and_clean_fixtures() {
    // Both ways: each rule directory holds a case where the rule fires and one it leaves alone.
    let root = root();
    for rule in [
        "barrier",
        "atomic",
        "dynamic-lds",
        "early-exit",
        "wave-size",
        "unroll-blocked",
        "candidate",
        "include-not-found",
    ] {
        let mut files = Vec::new();
        fixtures(&root.join(rule), &mut files);
        assert!(!files.is_empty(), "no fixtures under {rule}/");
        let mut flagged = false;
        let mut clean = false;
        for f in &files {
            let exp =
                expectations(&std::fs::read_to_string(f).unwrap_or_default()).unwrap_or_default();
            flagged |= exp.loops.values().any(|b| b.iter().any(|r| r == rule))
                || exp.diags.iter().any(|(_, r)| r == rule);
            clean |= exp.loops.values().any(|b| !b.iter().any(|r| r == rule));
        }
        assert!(flagged, "no fixture under {rule}/ expects `{rule}`");
        assert!(
            clean,
            "no fixture under {rule}/ has a loop that `{rule}` leaves alone"
        );
    }
}
