#!/usr/bin/env python3
"""Kill-9 campaign against `hip-unroll tune` (issue 21): SIGKILL at every phase, then the checks.

Two trees, both with a deterministic figure (a shell script prints a cost that follows from the
pragmas in the working copy), so that decisions can be compared exactly; the code-object gates
are off (`[compile] command` fails): this is about the state, not the compiler.
- tiny: three one-loop kernels, factors 2,4, pragma mode, two jobs (tests/tune_kill.rs's tree):
  kills at the test points of every search phase (ledger creation, discovery, working-copy
  sync, preparation, samples, decisions) and at random times over a whole run;
- t60: sixty one-loop files, all accepted, so that the apply writes 60 files: kills at every
  step of the apply's journal (`tuner.apply.*`), at random times during a `--resume` that
  applies, and a second kill during the roll-back (`tuner.apply.rolled-back`). Its trials start
  from a snapshot of a run killed right after its last decision (the confirmation), copied
  back to the same paths.

After each kill: every user file is its original or its fully updated content (counted), then
the next run (`--resume`; when the state holds no interrupted run: the report the ledger
keeps if the last run finished before the kill, else a plain run) must exit 0 with the
decisions (ledger rows), the report's candidates and the files of an uninterrupted run, no `.hip-unroll-*` or `*.new` file anywhere under the tree or the state directory, no
unfinished journal, and nothing left in the private TMPDIR given to tune.

Usage: bench/kill_campaign.py [--kills 100] [--seed 1] [--out DIR] [--bin PATH]
Writes OUT/trials.tsv (one row per trial) and OUT/summary.txt; exit 1 when a check failed.
"""
import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

A = """__global__ void fast(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] = a[i] * 2.0f + 1.0f;
    }
}
"""
B = """__global__ void more(float* b, int n) {
    for (int j = 0; j < n; ++j) {
        b[j] = b[j] * 3.0f;
    }
}
"""
C = """__global__ void flat(float* c, int n) {
    for (int k = 0; k < n; ++k) {
        c[k] += 1.0f;
    }
}
"""
RUN_TINY = """c=2000
if grep -A1 'pragma unroll 4' app.src | grep -q 'int i = 0'; then c=$((c - 500)); fi
if grep -A1 'pragma unroll 2' app.src | grep -q 'int i = 0'; then c=$((c - 200)); fi
if grep -A1 'pragma unroll 4' app.src | grep -q 'int j = 0'; then c=$((c - 300)); fi
if grep -A1 'pragma unroll 2' app.src | grep -q 'int j = 0'; then c=$((c - 100)); fi
echo "cost: $c"
"""
# 5% less per unrolled file: every one of the 60 variants clears the 2% minimum speedup.
RUN_60 = """n=$(cat *.cu | grep -c 'pragma unroll 4')
awk -v n="$n" 'BEGIN { printf "cost: %d\\n", 1000000 * 0.95 ^ n }'
"""
NO_GATES = '[compile]\ncommand = "false {src} -o {out}"\n'
N60 = 60


def kernel60(i):
    return f"__global__ void k{i:02}(float* a, int n) {{\n    for (int i = 0; i < n; ++i) {{\n        a[i] *= 2.0f;\n    }}\n}}\n"


def make_tiny(d):
    d.mkdir(parents=True)
    for name, text in [("a.cu", A), ("b.cu", B), ("c.cu", C)]:
        (d / name).write_text(text)
    (d / "build.sh").write_text("cat a.cu b.cu c.cu > app.src\n")
    (d / "run.sh").write_text(RUN_TINY)
    (d / ".gitignore").write_text("app.src\n")
    (d / "hip-unroll.toml").write_text(NO_GATES)


def make_60(d):
    d.mkdir(parents=True)
    for i in range(N60):
        (d / f"f{i:02}.cu").write_text(kernel60(i))
    (d / "run.sh").write_text(RUN_60)
    (d / "hip-unroll.toml").write_text(NO_GATES)


TREES = {
    "tiny": dict(
        make=make_tiny,
        files=["a.cu", "b.cu", "c.cu"],
        args=["--build", "sh build.sh", "--run", "sh run.sh", "--factors", "2,4", "--jobs", "2"],
    ),
    "t60": dict(
        make=make_60,
        files=[f"f{i:02}.cu" for i in range(N60)],
        args=["--build", "true", "--run", "sh run.sh", "--factors", "4", "--jobs", "1"],
    ),
}


class Failure(Exception):
    pass


class Campaign:
    def __init__(self, a):
        self.bin = a.bin
        self.out = Path(a.out)
        self.rng = random.Random(a.seed)
        self.tmp = self.out / "tmp"  # tune's TMPDIR: must be empty after every recovery
        self.rows = []
        self.failures = []

    # -- running tune -------------------------------------------------------------------
    def args(self, tree, state, extra=()):
        return [
            self.bin, "tune", *TREES[tree]["args"], "--time-regex", "cost: ([0-9]+)",
            "--time-unit", "units", "--mode", "pragma", "--state", str(state),
            "--format", "json", *extra,
        ]

    def env(self, point=None):
        e = dict(os.environ, TMPDIR=str(self.tmp))
        e.pop("HIP_UNROLL_TESTPOINT", None)
        if point:
            e["HIP_UNROLL_TESTPOINT"] = point
        return e

    def run(self, tree, d, state, extra=(), point=None, kill_after=None):
        """(returncode, stdout, stderr, seconds); returncode -9 when killed."""
        t0 = time.monotonic()
        p = subprocess.Popen(self.args(tree, state, extra), cwd=d, env=self.env(point),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if kill_after is not None:
            try:
                p.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
        out, err = p.communicate()
        return p.returncode, out, err.decode(errors="replace"), time.monotonic() - t0

    # -- what is compared ---------------------------------------------------------------
    @staticmethod
    def strip_gates(reason):
        if reason is None:
            return None
        kept = reason.split("code-object gates skipped")[0].rstrip("; ")
        return kept or None

    def decisions(self, state):
        db = sqlite3.connect(state / "ledger.db")
        try:
            rows = db.execute(
                "SELECT key, status, speedup, p_value, runs, reason FROM decisions ORDER BY key"
            ).fetchall()
        finally:
            db.close()
        return [r[:5] + (self.strip_gates(r[5]),) for r in rows]

    @staticmethod
    def last_run(state):
        if not (state / "ledger.db").exists():
            return None
        db = sqlite3.connect(state / "ledger.db")
        try:
            return db.execute("SELECT status, report FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        finally:
            db.close()

    def outcome(self, stdout):
        r = json.loads(stdout)
        return [
            (c["loop"], c.get("mode"), c.get("factor"), c["status"], c.get("speedup"),
             self.strip_gates(c.get("reason")))
            for c in r["candidates"]
        ]

    @staticmethod
    def files(tree, d):
        return {f: (d / f).read_bytes() for f in TREES[tree]["files"]}

    @staticmethod
    def leftovers(*dirs):
        bad = []
        for top in dirs:
            for root, subdirs, names in os.walk(top):
                for n in names + subdirs:
                    if n.startswith(".hip-unroll-") or n.endswith(".new"):
                        bad.append(os.path.join(root, n))
        return bad

    # -- references and snapshots ---------------------------------------------------------
    def reference(self, tree):
        base = self.out / f"ref-{tree}"
        shutil.rmtree(base, ignore_errors=True)
        d, state = base / "repo", base / "state"
        TREES[tree]["make"](d)
        original = self.files(tree, d)
        rc, out, err, secs = self.run(tree, d, state)
        if rc != 0:
            raise SystemExit(f"the uninterrupted {tree} run failed ({rc}): {err.strip()}")
        ref = dict(decisions=self.decisions(state), outcome=self.outcome(out),
                   final=self.files(tree, d), original=original, secs=secs)
        changed = sum(ref["final"][f] != original[f] for f in original)
        print(f"reference {tree}: {secs:.1f} s, {len(ref['decisions'])} decisions, "
              f"{changed} files written", flush=True)
        return ref

    def snapshot_60(self, ref):
        """A t60 run killed right after its last decision: every trial starts from a copy."""
        work, snap = self.out / "t60", self.out / "t60-snap"
        for p in (work, snap):
            shutil.rmtree(p, ignore_errors=True)
        make_60(work / "repo")
        n = len(ref["decisions"])
        rc, _, err, secs = self.run("t60", work / "repo", work / "state",
                                    point=f"tuner.search.decided=kill@{n}")
        if rc != -9:
            raise SystemExit(f"the t60 snapshot run was not killed at decision {n}: {rc} {err}")
        shutil.copytree(work, snap, symlinks=True)
        # How long a resume that applies takes, uninterrupted.
        rc, out, err, rsecs = self.run("t60", work / "repo", work / "state", ["--resume"])
        if rc != 0 or self.outcome(out) != ref["outcome"]:
            raise SystemExit(f"the t60 resume from the snapshot failed ({rc}): {err.strip()}")
        print(f"snapshot t60: {secs:.1f} s; an uninterrupted resume that applies: {rsecs:.2f} s",
              flush=True)
        return rsecs

    def restore_60(self):
        work = self.out / "t60"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(self.out / "t60-snap", work, symlinks=True)
        return work / "repo", work / "state"

    # -- one trial ------------------------------------------------------------------------
    def file_states(self, tree, d, ref):
        """(original, updated); Failure when a file is neither."""
        old = new = 0
        for f in TREES[tree]["files"]:
            b = (d / f).read_bytes()
            if b == ref["original"][f]:
                old += 1
            elif b == ref["final"][f]:
                new += 1
            else:
                raise Failure(f"{f} is neither original nor fully updated")
        return old, new

    def recover_and_check(self, tree, d, state, ref):
        rc, out, err, _ = self.run(tree, d, state, ["--resume"])
        how = "resume"
        if rc == 2 and "holds no interrupted run" in err:
            last = self.last_run(state)
            if last and last[0] == "done":
                # Killed after the run was recorded finished: its report is in the ledger.
                rc, out, how = 0, last[1], "finished"
            else:
                rc, out, err, _ = self.run(tree, d, state)
                how = "plain"
        if rc != 0:
            raise Failure(f"the {how} run after the kill exited {rc}: {err.strip()[-300:]}")
        if self.decisions(state) != ref["decisions"]:
            raise Failure(f"decisions differ from the uninterrupted run's after {how}")
        if self.outcome(out) != ref["outcome"]:
            raise Failure(f"the report's candidates differ after {how}")
        if self.files(tree, d) != ref["final"]:
            raise Failure("files differ from the uninterrupted run's")
        left = self.leftovers(d, state)
        if left:
            raise Failure(f"temporary files left: {left[:3]}")
        if (state / "apply" / "journal.json").exists():
            raise Failure("an unfinished journal is left")
        stale = os.listdir(self.tmp)
        if stale:
            raise Failure(f"left in TMPDIR: {stale[:3]}")
        return how

    def trial(self, tree, kind, ref, point=None, delay=None, second=None):
        """One kill (and with `second`, a kill of the recovery too), then the checks. Returns
        False when the process finished before the kill (the trial is not counted)."""
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir(parents=True)
        if tree == "tiny":
            base = self.out / "tiny"
            shutil.rmtree(base, ignore_errors=True)
            d, state = base / "repo", base / "state"
            make_tiny(d)
            extra = []
        else:
            d, state = self.restore_60()
            extra = ["--resume"]
        rc, _, err, secs = self.run(tree, d, state, extra, point=point, kill_after=delay)
        if rc != -9:
            if rc != 0:
                self.fail(tree, kind, point, delay, f"exited {rc} before the kill: {err.strip()}")
            return False
        kills = 1
        what = point or f"after {delay:.3f} s"
        try:
            old, new = self.file_states(tree, d, ref)
            if second:
                rc2, _, err2, _ = self.run(tree, d, state, ["--resume"], point=second)
                if rc2 == -9:
                    kills += 1
                    what += f", then {second}"
                    self.file_states(tree, d, ref)
                elif rc2 != 0:
                    raise Failure(f"the first recovery exited {rc2}: {err2.strip()}")
            how = self.recover_and_check(tree, d, state, ref)
            self.rows.append((tree, kind, what, kills, old, new, how, "ok"))
        except Failure as e:
            self.fail(tree, kind, what, None, str(e), kills)
        return True

    def fail(self, tree, kind, what, delay, msg, kills=0):
        what = what or f"after {delay:.3f} s"
        self.rows.append((tree, kind, what, kills, "", "", "", f"FAIL: {msg}"))
        self.failures.append(f"{tree} {what}: {msg}")
        print(f"FAIL {tree} {what}: {msg}", flush=True)
        # Keep the evidence.
        src = self.out / ("tiny" if tree == "tiny" else "t60")
        dst = self.out / f"failed-{len(self.failures)}"
        shutil.rmtree(dst, ignore_errors=True)
        if src.exists():
            shutil.copytree(src, dst, symlinks=True)


# Test points per tree, with the trials each gets (of 100) and the largest hit count to draw
# from (lowered when a draw does not fire: the run finished first).
PLAN = [
    # (tree, point, trials, max nth)
    ("tiny", "tuner.ledger.create.before-rename", 3, 1),
    ("tiny", "tuner.search.discovered", 3, 1),
    ("tiny", "tuner.workcopy.sync.manifest-first", 5, 12),
    ("tiny", "tuner.workcopy.sync.file-written", 8, 40),
    ("tiny", "tuner.search.prepared", 4, 3),
    ("tiny", "tuner.search.sample", 8, 400),
    ("tiny", "tuner.search.decided", 6, 7),
    ("tiny", "tuner.apply.renamed", 2, 2),
    ("t60", "tuner.apply.blobs", 2, 1),
    ("t60", "tuner.apply.journaled", 2, 1),
    ("t60", "tuner.apply.temp", 6, 60),
    ("t60", "tuner.apply.before-rename", 6, 60),
    ("t60", "tuner.apply.renamed", 8, 60),
    ("t60", "tuner.apply.renamed-all", 2, 1),
    ("t60", "tuner.apply.done", 2, 1),
    ("t60", "tuner.apply.released", 2, 1),
]
RANDOM_TINY = 18
RANDOM_60 = 10
DOUBLE_60 = 5  # a kill in the renames, then one in the roll-back


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=100, help="trials (scales the plan)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--bin", default=None)
    a = ap.parse_args()
    repo = Path(__file__).resolve().parent.parent
    a.out = a.out or subprocess.check_output(["mktemp", "-d", "/tmp/kill-campaign.XXXXXX"],
                                             text=True).strip()
    if not a.bin:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=repo, check=True)
        a.bin = str(Path(a.out) / "hip-unroll")
        shutil.copy(repo / "target/release/hip-unroll", a.bin)
    c = Campaign(a)
    c.out.mkdir(parents=True, exist_ok=True)
    c.tmp.mkdir(parents=True, exist_ok=True)
    scale = a.kills / 100
    n = lambda k: max(1, round(k * scale))
    t_start = time.monotonic()
    refs = {t: c.reference(t) for t in ("tiny", "t60")}
    resume_secs = c.snapshot_60(refs["t60"])
    jobs = []
    for tree, point, trials, top in PLAN:
        jobs += [(tree, "point", point, top)] * n(trials)
    jobs += [("tiny", "random", None, None)] * n(RANDOM_TINY)
    jobs += [("t60", "random", None, None)] * n(RANDOM_60)
    jobs += [("t60", "double", None, None)] * n(DOUBLE_60)
    tops = {(t, p): top for t, _, p, top in jobs if p}
    c.rng.shuffle(jobs)
    for i, (tree, kind, point, _) in enumerate(jobs):
        for _attempt in range(20):
            if kind == "point":
                top = tops[(tree, point)]
                nth = c.rng.randint(1, top)
                spec = f"{point}=kill@{nth}"
                if c.trial(tree, kind, refs[tree], point=spec):
                    break
                tops[(tree, point)] = max(1, nth - 1)
            elif kind == "random":
                span = refs["tiny"]["secs"] if tree == "tiny" else resume_secs
                if c.trial(tree, kind, refs[tree], delay=c.rng.uniform(0, span)):
                    break
            else:
                spec = f"tuner.apply.renamed=kill@{c.rng.randint(2, N60)}"
                second = f"tuner.apply.rolled-back=kill@{c.rng.randint(1, 10)}"
                if c.trial(tree, kind, refs[tree], point=spec, second=second):
                    break
        row = c.rows[-1] if c.rows else None
        print(f"{i + 1}/{len(jobs)}\t" + "\t".join(str(x) for x in row), flush=True)
    with open(c.out / "trials.tsv", "w") as f:
        f.write("tree\tkind\tkill\tkills\toriginal\tupdated\trecovery\tresult\n")
        for r in c.rows:
            f.write("\t".join(str(x) for x in r) + "\n")
    kills = sum(int(r[3]) for r in c.rows if r[3] != "")
    mixed = sum(1 for r in c.rows if r[0] == "t60" and r[4] not in ("", 0) and r[5] not in ("", 0))
    by = {}
    for r in c.rows:
        by.setdefault(r[1], 0)
        by[r[1]] += 1
    lines = [
        f"trials: {len(c.rows)} ({', '.join(f'{k} {v}' for k, v in sorted(by.items()))}), "
        f"kills: {kills}, failed checks: {len(c.failures)}, {time.monotonic() - t_start:.0f} s",
        f"t60 kills that left the 60 files part old, part new (each whole): {mixed}",
        f"recovered by --resume: {sum(1 for r in c.rows if r[6] == 'resume')}, "
        f"by a plain run (nothing recorded yet): {sum(1 for r in c.rows if r[6] == 'plain')}, "
        f"finished before the kill (report in the ledger): "
        f"{sum(1 for r in c.rows if r[6] == 'finished')}",
    ] + [f"  {x}" for x in c.failures]
    text = "\n".join(lines) + "\n"
    (c.out / "summary.txt").write_text(text)
    print(text, end="")
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
