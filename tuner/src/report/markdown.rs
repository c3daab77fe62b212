//! `tune --format markdown`: the report for a pull-request comment, the HTML report's
//! per-kernel summary in text: the verdict, the specs (multi-spec runs), a table per kernel
//! (candidate, speedup [interval], occupancy change, decision and reason; each spec's
//! judgement under its candidate), what was applied, the notes, the accepted edits in a
//! `diff` block, and the timing line last.

use super::summary::{self, Specs};
use super::{Outcome, Report, Status};
use std::fmt::Write;

/// A table cell: pipes escaped, one line.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// `s` as inline code, whatever backticks it holds (a run of backticks longer than any in it).
fn code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A code fence longer than any run of backticks in `s`.
fn fence(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// `tune --format markdown` (see the module documentation).
pub fn markdown(r: &Report) -> String {
    document(r, &Specs::of(r))
}

/// The markdown report of `r` with the multi-spec judgements `specs`.
pub(super) fn document(r: &Report, specs: &Specs) -> String {
    let mut o = String::new();
    let u = &r.baseline.unit;
    let _ = writeln!(o, "### hip-unroll tune\n");
    if !specs.specs.is_empty() {
        let _ = writeln!(
            o,
            "{} (backend {}; each spec's figures below).\n",
            if r.applied.is_empty() {
                "Nothing applied".to_string()
            } else {
                format!(
                    "**{:.3}x** faster, the geometric mean over the specs reaching an applied loop{}",
                    r.final_.speedup,
                    super::confirmed(r.final_.ci)
                )
            },
            code(&r.extra.backend)
        );
    } else if r.final_.figure.is_nan() {
        let _ = writeln!(
            o,
            "Nothing measured (backend {}){}.\n",
            code(&r.extra.backend),
            if r.candidates.is_empty() {
                ": no loop to tune"
            } else {
                ""
            }
        );
    } else {
        let _ = writeln!(
            o,
            "**{:.3}x** faster: {} {u} → {} {u}{} (backend {}, baseline {}{}).\n",
            r.final_.speedup,
            super::fig(r.baseline.figure),
            super::fig(r.final_.figure),
            super::confirmed(r.final_.ci),
            code(&r.extra.backend),
            r.baseline.runs_text(),
            match r.extra.noise {
                Some((s, _)) => format!(", spread {:.1}%", s * 100.0),
                None => String::new(),
            }
        );
    }
    if let Some(m) = r.extra.min_speedup {
        let _ = writeln!(
            o,
            "Accepted when at least {:.1}% faster{}. {} candidates: {}.\n",
            m * 100.0,
            r.extra
                .confidence
                .map(|c| format!(" at {:.0}% confidence", c * 100.0))
                .unwrap_or_default(),
            r.candidates.len(),
            super::counts(r)
        );
    } else if !r.candidates.is_empty() {
        let _ = writeln!(
            o,
            "{} candidates: {}.\n",
            r.candidates.len(),
            super::counts(r)
        );
    }
    if !specs.specs.is_empty() {
        let _ = writeln!(o, "| spec | kernel | status | baseline | final | reason |");
        let _ = writeln!(o, "|---|---|---|---:|---:|---|");
        for s in &specs.specs {
            let (baseline, final_) = s.figures();
            let _ = writeln!(
                o,
                "| {} | {} | {} | {baseline} | {final_} | {} |",
                cell(&code(&s.spec)),
                cell(&code(&s.kernel)),
                cell(&s.status),
                cell(s.reason.as_deref().unwrap_or(""))
            );
        }
        let _ = writeln!(o);
    }
    for g in summary::groups(r) {
        let _ = writeln!(o, "#### {} in {}\n", code(&g.function), code(&g.file));
        for (l, line) in &g.loops {
            let judges = specs.of_loop(r, &g.file, l);
            if !judges.is_empty() {
                let shown: Vec<String> = judges
                    .iter()
                    .map(|(s, k)| format!("{} (kernel {})", code(s), code(k)))
                    .collect();
                let _ = writeln!(
                    o,
                    "{} (line {line}) judged by {}.\n",
                    code(l),
                    shown.join(", ")
                );
            }
        }
        let _ = writeln!(
            o,
            "| candidate | speedup [interval] | occupancy change | decision | reason |"
        );
        let _ = writeln!(o, "|---|---:|---|---|---|");
        for &i in &g.candidates {
            let c = &r.candidates[i];
            let decision = match c.status {
                Status::Accepted => format!("**{}**", summary::decision(c)),
                _ => summary::decision(c),
            };
            let evidence = summary::evidence(c);
            let reason = match (&c.reason, evidence.is_empty()) {
                (Some(r), true) => r.clone(),
                (Some(r), false) => format!("{r} ({evidence})"),
                (None, _) => evidence,
            };
            let _ = writeln!(
                o,
                "| {} line {} {} | {} | {} | {} | {} |",
                cell(&code(&c.loop_id)),
                c.line,
                summary::variant(c),
                summary::speedup(c),
                cell(&summary::occupancy(c)),
                decision,
                cell(&reason)
            );
            for j in specs.of_candidate(i) {
                let _ = writeln!(
                    o,
                    "| ↳ spec {} (kernel {}) | {:.3}x [{:.3}, {:.3}] |  |  | {} pairs |",
                    cell(&code(&j.spec)),
                    cell(&code(&j.kernel)),
                    j.speedup,
                    j.interval[0],
                    j.interval[1],
                    j.ratios.len()
                );
            }
        }
        let _ = writeln!(o);
    }
    if r.applied.is_empty() {
        let _ = writeln!(o, "Nothing applied.");
    } else {
        let verb = match r.extra.outcome {
            Outcome::Applied => "Applied",
            Outcome::DryRun => "Would apply (dry run)",
            Outcome::Diff => "Diff printed, not applied",
            Outcome::Edited => "Not applied (a file was edited meanwhile)",
            Outcome::Interrupted => "Not applied (interrupted)",
        };
        let _ = writeln!(o, "{verb}:");
        for a in &r.applied {
            let _ = writeln!(
                o,
                "- {} {}: {} {}",
                code(&format!("{}:{}", a.file, a.line)),
                code(&a.loop_id),
                a.mode,
                super::factor_text(a.factor)
            );
        }
    }
    if !r.written.is_empty() {
        let files: Vec<String> = r.written.iter().map(|f| code(f)).collect();
        let _ = writeln!(o, "\nWritten: {}.", files.join(", "));
    }
    if !r.edited.is_empty() {
        let files: Vec<String> = r.edited.iter().map(|f| code(f)).collect();
        let _ = writeln!(
            o,
            "\nEdited meanwhile, left as saved (nothing written): {}.",
            files.join(", ")
        );
    }
    for n in &r.extra.notes {
        let _ = writeln!(o, "\n> {}", cell(n));
    }
    if let Some(d) = r.extra.diff.as_deref().filter(|d| !d.is_empty()) {
        let f = fence(d);
        let _ = writeln!(o, "\nAccepted edits:\n");
        let _ = write!(o, "{f}diff\n{d}");
        if !d.ends_with('\n') {
            o.push('\n');
        }
        let _ = writeln!(o, "{f}");
    }
    let _ = writeln!(o, "\n{}", r.timing.line());
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_and_fences_outlast_the_backticks_inside() {
        assert_eq!(code("k.cu"), "`k.cu`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(fence("no ticks"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}

#[cfg(test)]
mod spec_tests {
    use super::super::summary::fixture;
    use super::*;

    #[test]
    fn a_multi_spec_report_lists_the_specs_and_their_judgements() {
        let md = document(&fixture::report(), &fixture::specs());
        assert!(
            md.contains(
                "| `bench/c.toml` | `kc` | failed |  |  | bench/c.toml:3: `n` is not a parameter of kc |"
            ),
            "{md}"
        );
        assert!(md.contains("`add_one:0` (line 7) judged by `bench/a.toml` (kernel `ka`), `bench/b.toml` (kernel `kb`)."), "{md}");
        assert_eq!(md.matches("| ↳ spec ").count(), 4, "{md}");
        assert!(
            md.contains("| ↳ spec `bench/a.toml` (kernel `ka`) | 1.110x [1.080, 1.140] |"),
            "{md}"
        );
    }
}
