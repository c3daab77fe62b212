#!/usr/bin/env python3
"""Writes a generated kernel of N generic lambdas (default 3000), each held by a variable,
calling its own parameter in a loop and called with a lambda: the worst case of the lambda
reach (guards/src/callgraph.rs `lambda_param_targets`, lambda nodes). Time a check on it with
two binaries in the same session, e.g.

    python3 bench/lambda_stress.py /tmp/stress.cu 3000
    /usr/bin/time -f '%e s %M KB' BASE check --format json /tmp/stress.cu > /dev/null
    /usr/bin/time -f '%e s %M KB' NEW  check --format json /tmp/stress.cu > /dev/null
"""
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "stress_lambdas.cu"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
lines = ["#include <hip/hip_runtime.h>", "__global__ void big(float* out) {"]
for i in range(n):
    lines.append(f"  auto l{i} = [&](auto op, int j) {{ for (int t = 0; t < 4; ++t) op(t + j); out[{i}] = 0.f; }};")
    lines.append(f"  l{i}([&](int x) {{ out[x] = {i}.f; }}, {i});")
lines.append("}")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
