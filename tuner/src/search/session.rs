//! The lifecycle of one tune: validation, the state directory's lock, the commands a killed
//! tune left running, an apply a kill interrupted, the ledger and the scan of the tree
//! ([`Session::open`]); then, with the lanes started, the run in the ledger, the search
//! ([`super::coordinate`]), the combination of every kernel's accepted variants and its
//! confirmation against the original, the apply, the report, and the run's end in the ledger
//! ([`Session::run`]).

use super::coordinate::{self, Coordinator};
use super::{ApplyMode, Progress, Settings, Tuned};
use crate::apply;
use crate::discover::Discovery;
use crate::error::Error;
use crate::executor::local::LaneSetup;
use crate::executor::Executor;
use crate::ledger::{self, Ledger};
use crate::orphans;
use crate::report::{self, Outcome, Report};
use crate::workcopy::Tree;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How long a start waits for the commands of a killed earlier tune to die after SIGKILL.
const REAP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The state directory of `settings` for the tree at `root`.
pub fn state_dir(settings: &Settings, root: &Path) -> PathBuf {
    if settings.state_dir.is_absolute() {
        settings.state_dir.clone()
    } else {
        root.join(&settings.state_dir)
    }
}

/// No kernel in PATHS: nothing to tune, one line.
pub fn require_kernels(settings: &Settings, disc: &Discovery) -> Result<(), Error> {
    if disc.kernels().next().is_none() {
        let shown: Vec<String> = settings
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        return Err(Error::NoKernels(shown.join(", ")));
    }
    Ok(())
}

/// The hash of everything a decision depends on besides the two states: the backend, the
/// settings' fingerprint, what the lanes' backend adds, and the device model.
pub fn settings_hash(backend: &str, fingerprint: &str, lane: &str, model: &str) -> String {
    let text = format!("{backend}\n{fingerprint}\n{lane}\ndevice model: {model}");
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// The status a run ends with after `e`: a full disk or lost lanes leave it resumable
/// (`interrupted`), as Ctrl-C does; anything else is `failed`.
fn failed_status(e: &Error) -> &'static str {
    match e {
        Error::DiskFull { .. } | Error::Interrupted | Error::LanesGone(_) => "interrupted",
        _ => "failed",
    }
}

/// A tune holding its state directory.
pub struct Session<'a> {
    pub settings: &'a Settings,
    pub state_dir: PathBuf,
    _lock: std::fs::File,
    pub ledger: Ledger,
    pub tree: Tree,
    pub disc: Discovery,
    records_dir: PathBuf,
    recovered: Option<String>,
    /// The start of the tune's wall time.
    started: std::time::Instant,
    /// The backend's objectives (the bench backend's specs; empty: one objective).
    pub objectives: Vec<crate::objective::Objective>,
}

impl<'a> Session<'a> {
    /// Take the state directory: lock it, end what a killed tune left running, roll back an
    /// interrupted apply (and find the loops again in the restored tree), open the ledger and
    /// scan the tree.
    pub fn open(
        settings: &'a Settings,
        root: &Path,
        disc: Discovery,
    ) -> Result<Session<'a>, Error> {
        let started = disc.started.unwrap_or_else(std::time::Instant::now);
        crate::limits::check(settings)?;
        require_kernels(settings, &disc)?;
        let state_dir = state_dir(settings, root);
        let lock = Ledger::lock(&state_dir)?;
        // Commands of an earlier tune that was killed may still be running in the working
        // copies (a build writing ./app): end them before any working copy is touched.
        let records_dir = orphans::records_dir(&state_dir);
        orphans::reap(&records_dir, &state_dir.join("slots"), REAP_WAIT)?;
        // An apply a kill interrupted is rolled back before the tree is read (see apply.rs);
        // the loops found in the half-written tree are then found again in the restored one.
        let recovered = apply::recover(&state_dir)?;
        let disc = match &recovered {
            Some(r) if !r.restored.is_empty() => Discovery {
                started: Some(started),
                ..super::discover(settings, root)?
            },
            _ => disc,
        };
        let ledger = Ledger::open(&state_dir)?;
        let tree = Tree::scan(root, std::slice::from_ref(&state_dir))?;
        let recovered = recovered.map(|r| apply::recovered_note(&r, &tree.root));
        Ok(Session {
            settings,
            state_dir,
            _lock: lock,
            ledger,
            tree,
            disc,
            records_dir,
            recovered,
            started,
            objectives: Vec::new(),
        })
    }

    /// What local lanes work with.
    pub fn lane_setup(&self) -> LaneSetup<'_> {
        LaneSetup {
            tree: &self.tree,
            state_dir: &self.state_dir,
            records_dir: self.records_dir.clone(),
            settings: self.settings,
        }
    }

    /// Run the tune on `exec`'s lanes.
    pub fn run(
        &self,
        exec: &dyn Executor,
        stop: &Arc<AtomicBool>,
        progress: &dyn Progress,
    ) -> Result<Tuned, Error> {
        let settings = self.settings;
        let lanes = exec.lanes();
        let Some(first) = lanes.first() else {
            return Err(Error::Environment("no lane to measure on".into()));
        };
        let models: BTreeSet<&str> = lanes.iter().map(|l| l.device.model.as_str()).collect();
        if models.len() > 1 {
            let shown: Vec<String> = lanes
                .iter()
                .map(|l| {
                    format!(
                        "{} {}: {}",
                        l.device.host,
                        l.device.id.as_deref().unwrap_or("-"),
                        l.device.model
                    )
                })
                .collect();
            return Err(Error::Usage(format!(
                "the lanes' devices are of different models ({}); one tune measures one model: choose devices of one model",
                shown.join("; ")
            )));
        }
        let shash = settings_hash(
            &first.backend,
            &settings.fingerprint,
            &first.fingerprint,
            &first.device.model,
        );
        let run = self.ledger.begin(
            &self.tree.hash,
            &shash,
            &settings.fingerprint,
            settings.resume,
        )?;
        let mut c = Coordinator::new(coordinate::Setup {
            settings,
            ledger: &self.ledger,
            tree: &self.tree,
            exec,
            progress,
            stop,
            session: run.session_id,
            settings_hash: shash.clone(),
            started: self.started,
            objectives: &self.objectives,
        });
        if let Some(n) = &self.recovered {
            c.out.notes.insert(n.clone());
        }
        if self.disc.loops().next().is_none() {
            c.out.notes.insert(format!(
                "no loop to tune: the kernels of {} have no loop",
                settings
                    .paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let result = c.run(&self.disc);
        let interrupted = matches!(result, Err(Error::Interrupted));
        match result {
            Ok(()) | Err(Error::Interrupted) => {}
            Err(e) => {
                exec.halt();
                // Lost lanes and a full disk keep the state: --resume goes on.
                let _ = self.ledger.finish(run.run_id, failed_status(&e), None);
                return Err(e);
            }
        }
        if interrupted {
            exec.halt();
            c.flush_partial()?;
        }
        let mut outcome = if interrupted {
            Outcome::Interrupted
        } else {
            match settings.apply {
                ApplyMode::Write => Outcome::Applied,
                ApplyMode::DryRun => Outcome::DryRun,
                ApplyMode::Diff => Outcome::Diff,
            }
        };
        let (mut written, mut edited) = (Vec::new(), Vec::new());
        let mut diff = None;
        let mut final_ = report::Final {
            figure: c
                .out
                .baseline
                .as_ref()
                .map(|b| b.figure)
                .unwrap_or(f64::NAN),
            speedup: 1.0,
            ci: None,
        };
        let overlay = if interrupted {
            Default::default()
        } else {
            c.combine(&self.disc)
        };
        if !interrupted && !overlay.is_empty() {
            match c.confirm(&overlay) {
                Ok((f, faster)) => {
                    final_ = f;
                    if !faster {
                        c.out.notes.insert(format!(
                            "the confirmation did not show the final state faster than the original ({:.3}x): nothing applied",
                            final_.speedup
                        ));
                        c.out.applied.clear();
                    }
                }
                Err(Error::Interrupted) => outcome = Outcome::Interrupted,
                Err(e) => {
                    exec.halt();
                    let _ = self.ledger.finish(run.run_id, failed_status(&e), None);
                    return Err(e);
                }
            }
        }
        exec.halt();
        let applied = c.applied();
        // The accepted edits as a diff against the tree as read, for every apply mode (the
        // markdown and HTML reports show it), taken before the apply writes the files.
        let accepted_diff = if outcome != Outcome::Interrupted && !applied.is_empty() {
            Some(apply::diff(&self.tree, &overlay)?)
        } else {
            None
        };
        if outcome != Outcome::Interrupted && !applied.is_empty() {
            match settings.apply {
                ApplyMode::Write => {
                    // An error leaves every file as the run found it: the run stays resumable.
                    let a = apply::apply(&self.tree, &overlay, &self.state_dir, run.run_id)?;
                    if !a.edited.is_empty() {
                        outcome = Outcome::Edited;
                        c.out.notes.insert(apply::edited_note(&a.edited));
                    }
                    written = a.written.iter().map(|p| p.display().to_string()).collect();
                    edited.extend(a.edited.iter().map(|p| p.display().to_string()));
                }
                ApplyMode::Diff => diff = accepted_diff.clone(),
                ApplyMode::DryRun => {}
            }
        }
        if outcome == Outcome::Interrupted {
            c.out.notes.insert(
                "interrupted: nothing was applied; the ledger keeps what was decided (a resumed tune continues)".into(),
            );
        }
        let unit = c.unit().to_string();
        if c.out.baseline.is_none() {
            c.out.baseline = match self.ledger.baseline(&shash, &self.tree.hash)? {
                Some(b) => Some(b),
                None => self
                    .ledger
                    .baseline_from_samples(&shash, &self.tree.hash, &unit)?,
            };
        }
        let baseline = c.out.baseline.clone().unwrap_or(ledger::Baseline {
            figure: f64::NAN,
            unit,
            runs: 0,
            spread: f64::NAN,
        });
        if final_.figure.is_nan() {
            final_.figure = baseline.figure;
        }
        c.note_failed_specs();
        let timing = c
            .timeline
            .finish(std::time::Instant::now(), c.out.compiles, c.out.builds);
        let report = Report {
            version: 1,
            baseline: report::Baseline {
                figure: baseline.figure,
                unit: baseline.unit.clone(),
                runs: baseline.runs,
                launches_per_sample: c.out.launches_per_sample,
            },
            final_,
            candidates: c.candidates(),
            applied,
            written,
            edited,
            timing,
            specs: c.spec_statuses(),
            extra: report::Extra {
                backend: first.backend.clone(),
                noise: c.out.noise,
                compiles: c.out.compiles,
                builds: c.out.builds,
                reused: c.out.reused,
                outcome,
                notes: c.out.notes.iter().cloned().collect(),
                min_speedup: Some(settings.plan.min_speedup),
                confidence: Some(settings.plan.confidence),
                diff: accepted_diff,
            },
        };
        let status = if outcome == Outcome::Interrupted {
            "interrupted"
        } else {
            "done"
        };
        self.ledger
            .finish(run.run_id, status, Some(&report::json(&report)))?;
        apply::release(&self.state_dir)?;
        Ok(Tuned {
            report,
            diff,
            interrupted: outcome == Outcome::Interrupted,
            run_id: run.run_id,
        })
    }
}
