#!/usr/bin/env python3
"""Latency of `hip-unroll server`: from an edit of a 2,000-line kernel file to its
diagnostics, after the debounce, against `hip-unroll check` of the same file as a process
(the baseline), both measured in this one run on the same generated input.

The client speaks LSP over the server's stdin/stdout (Content-Length frames, JSON). Each round
sends one `didChange` (an incremental edit of one loop bound, so every round's text differs)
and times it to the `publishDiagnostics` of that version; the figure is that time minus the
debounce (the server waits that long on purpose). Reports median and p95 of both, their ratio,
the core count and the load average before and after.

usage: bench/server_latency.py [--bin target/release/hip-unroll] [--rounds 50] [--debounce-ms 100]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def kernel_file(lines_wanted=2000):
    """A 2,000-line kernel file: kernels with loops, helpers with barriers, shuffles."""
    out = ['#include "helpers.cuh"', ""]
    k = 0
    while len(out) < lines_wanted - 16:
        out += [
            f"__global__ void k{k}(float* out, const float* in, int n) {{",
            "  __shared__ float tile[256];",
            "  #pragma unroll 4",
            f"  for (int i = 0; i < {8 + k % 5}; ++i) {{",
            "    tile[threadIdx.x] = in[i];",
            "    stage(tile);",
            "  }",
            "  for (int j = 0; j < n; ++j) {",
            "    out[j] = in[j] * 2.0f + tile[j % 256];",
            "  }",
            "  float x = out[threadIdx.x];",
            "  x += __shfl_down(x, 2, 32);",
            "  out[threadIdx.x] = x;",
            "}",
            "",
        ]
        k += 1
    while len(out) < lines_wanted:
        out.append("// padding")
    return "\n".join(out) + "\n"


HEADER = """#pragma once
__device__ void stage(float* s) {
  s[threadIdx.x] *= 2.0f;
  __syncthreads();
}
"""


class Client:
    def __init__(self, argv, cwd):
        self.p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, msg):
        msg["jsonrpc"] = "2.0"
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def recv(self):
        size = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("server closed its output")
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                size = int(value)
        return json.loads(self.p.stdout.read(size))

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, "params": params})
        while True:
            m = self.recv()
            if m.get("id") == rid and "method" not in m:
                return m

    def wait_publish(self, uri, version):
        while True:
            m = self.recv()
            if m.get("method") == "textDocument/publishDiagnostics":
                p = m["params"]
                if p["uri"] == uri and p.get("version") == version:
                    return p


def proc_cpu(pid):
    """User + system CPU seconds of a running process (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(xs, q):
    xs = sorted(xs)
    i = (len(xs) - 1) * q
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/hip-unroll")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--debounce-ms", type=int, default=100)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        d = os.path.realpath(d)
        text = kernel_file()
        path = os.path.join(d, "kernels.cu")
        with open(path, "w") as f:
            f.write(text)
        with open(os.path.join(d, "helpers.cuh"), "w") as f:
            f.write(HEADER)
        lines = text.count("\n")

        # Baseline: check of the same file as a process.
        check = []
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(a.rounds):
            t = time.perf_counter()
            r = subprocess.run([binary, "check", "--format", "json", "kernels.cu"], cwd=d, capture_output=True)
            check.append(time.perf_counter() - t)
            if r.returncode not in (0, 1):
                sys.exit(f"check failed: {r.stderr.decode()}")
        n_check = len(json.loads(r.stdout)["diagnostics"])
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        check_cpu = (ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime) / a.rounds

        c = Client([binary, "server"], d)
        c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                 "initializationOptions": {"debounceMs": a.debounce_ms}})
        c.send({"method": "initialized", "params": {}})
        uri = "file://" + path
        c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "cuda", "version": 1, "text": text}}})
        first = c.wait_publish(uri, 1)
        if len(first["diagnostics"]) != n_check:
            sys.exit(f"server {len(first['diagnostics'])} diagnostics, check {n_check}")
        # The first loop bound is on line 6 (0-based 5): `  for (int i = 0; i < 8; ++i) {`.
        bound_line = text.split("\n").index("  for (int i = 0; i < 8; ++i) {")
        col = len("  for (int i = 0; i < ")
        server = []
        current = "8"
        cpu0 = proc_cpu(c.p.pid)
        for r in range(a.rounds):
            new = str(10 + r % 50)
            version = 2 + r
            t = time.perf_counter()
            c.send({"method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": bound_line, "character": col},
                                              "end": {"line": bound_line, "character": col + len(current)}},
                                    "text": new}]}})
            p = c.wait_publish(uri, version)
            server.append(time.perf_counter() - t - a.debounce_ms / 1000.0)
            current = new
            assert len(p["diagnostics"]) == n_check
        server_cpu = (proc_cpu(c.p.pid) - cpu0) / a.rounds
        c.request("shutdown", None)
        c.send({"method": "exit", "params": None})
        c.p.wait(timeout=30)
    load_after = os.getloadavg()
    ms = lambda x: f"{x * 1000:.1f} ms"
    print(f"input: {lines} lines, {len(text)} bytes, {n_check} diagnostics; rounds {a.rounds}; debounce {a.debounce_ms} ms")
    print(f"server, didChange -> publishDiagnostics minus debounce: median {ms(statistics.median(server))}, p95 {ms(pct(server, 0.95))}, max {ms(max(server))}")
    print(f"baseline, check --format json as a process:            median {ms(statistics.median(check))}, p95 {ms(pct(check, 0.95))}")
    print(f"ratio server/check (medians): {statistics.median(server) / statistics.median(check):.2f}")
    print(f"CPU per round (user+system): server {ms(server_cpu)}, check process {ms(check_cpu)}; ratio {server_cpu / check_cpu:.2f}")
    print(f"cores {os.cpu_count()}; load average before {load_before[0]:.2f} {load_before[1]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f}")


if __name__ == "__main__":
    main()
