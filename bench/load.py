#!/usr/bin/env python3
"""Background CPU load for the tuner's measurement experiments (bench/aa_false_accepts.sh).

Two kinds of load, at normal priority, until killed (SIGTERM ends the children too):
- hogs: HOGS processes that spin forever (default: one per core);
- bursts: every U(BURST_GAP) seconds, U(BURST_PROCS) extra processes that spin for
  U(BURST_LEN) seconds (a parallel build, a browser tab, another user's job).
Seeded (--seed) so that a run can be repeated; prints what it does to stderr once.
"""
import argparse
import os
import random
import signal
import sys
import time


def spin(seconds):
    end = time.monotonic() + seconds if seconds is not None else None
    x = 0
    while end is None or time.monotonic() < end:
        for _ in range(10000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def child(seconds):
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            spin(seconds)
        finally:
            os._exit(0)
    return pid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--burst-gap", type=float, nargs=2, default=[0.3, 2.0])
    ap.add_argument("--burst-len", type=float, nargs=2, default=[0.02, 0.4])
    ap.add_argument("--burst-procs", type=int, nargs=2, default=[1, 4])
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    hogs = [child(None) for _ in range(a.hogs)]
    live = set(hogs)

    def stop(*_):
        for p in list(live):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(
        f"load: {a.hogs} hogs, bursts of {a.burst_procs[0]}-{a.burst_procs[1]} procs for "
        f"{a.burst_len[0]}-{a.burst_len[1]} s every {a.burst_gap[0]}-{a.burst_gap[1]} s, seed {a.seed}",
        file=sys.stderr,
    )
    while True:
        time.sleep(rng.uniform(*a.burst_gap))
        n = rng.randint(*a.burst_procs)
        for _ in range(n):
            live.add(child(rng.uniform(*a.burst_len)))
        # Reap finished bursts.
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            live.discard(pid)


if __name__ == "__main__":
    main()
