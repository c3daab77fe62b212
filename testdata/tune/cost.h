// Cost mode of the tune example (`COST=1 sh build.sh`): a figure that follows from what the
// compiler made of the source, the same on every run and every machine with the same clang.
// clang -fsanitize-coverage=trace-pc-guard calls the hook below on every control-flow edge of
// the optimized program (the instrumentation runs after the optimizer, so an unrolled loop
// passes fewer edges); the driver counts the edges its kernels pass and prints
// "cost: N edges". The hooks themselves are not instrumented.
#pragma once
#include <cstdint>

static unsigned long long hu_cost_edges;
static bool hu_cost_on;

extern "C" __attribute__((no_sanitize("coverage"))) void
__sanitizer_cov_trace_pc_guard_init(uint32_t*, uint32_t*) {}

extern "C" __attribute__((no_sanitize("coverage"))) void
__sanitizer_cov_trace_pc_guard(uint32_t*) {
    hu_cost_edges += hu_cost_on;
}
