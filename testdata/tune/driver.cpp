// Host driver of the tune example: runs the kernels through hip-unroll's HIP host shim
// (testdata/transforms/hip_host.h), prints the time the kernels took as "time: X ms" and writes
// their outputs to out.txt (floats as exact hex) for the bit-exact check.
#include "hip_host.h"
#include <chrono>
#ifdef HU_COST
#include "cost.h"
#define HU_CHAIN_ITERS 400
#else
#define HU_CHAIN_ITERS 8000
#endif
#include "chain.cu"
#include "rowsum.cu"
#include "scale.cu"
#include "tile.cu"

int main() {
    const int n = 4096;
    std::vector<int> ints(n), chained(n), scaled(64), taps(8);
    for (int i = 0; i < n; ++i) ints[i] = i * 7 + 1;
    for (int k = 0; k < 8; ++k) taps[k] = k * k - 3;
    const int rows = 256, m = 1000;
    std::vector<float> a(rows * m), sums(rows), tin(n), tout(n);
    unsigned x = 12345;
    for (auto& v : a) {
        x = x * 1664525u + 1013904223u;
        v = (x >> 8) * (1.0f / 16777216.0f) * ((x & 7) + 1);
    }
    for (int i = 0; i < n; ++i) tin[i] = i * 0.25f;

    auto t0 = std::chrono::steady_clock::now();
#ifdef HU_COST
    hu_cost_on = true;
#endif
    hu_launch({n / 64, 1, 1}, {64, 1, 1}, chain, ints.data(), chained.data(), n, HU_CHAIN_ITERS);
    hu_launch({rows / 64, 1, 1}, {64, 1, 1}, rowsum, a.data(), sums.data(), rows, m);
    hu_launch({1, 1, 1}, {64, 1, 1}, scale, scaled.data(), taps.data(), 64, 8);
    hu_launch({n / 64, 1, 1}, {64, 1, 1}, tile, tin.data(), tout.data(), n, 16);
#ifdef HU_COST
    hu_cost_on = false;
#endif
    auto t1 = std::chrono::steady_clock::now();

    // Exact outputs: float sums as hex, the larger outputs as 64-bit FNV-1a of their bytes.
    auto fnv = [](const void* p, size_t len) {
        unsigned long long h = 1469598103934665603ull;
        for (size_t i = 0; i < len; ++i) h = (h ^ ((const unsigned char*)p)[i]) * 1099511628211ull;
        return h;
    };
    FILE* f = fopen("out.txt", "w");
    if (!f) return 1;
    fprintf(f, "chain %016llx\n", fnv(chained.data(), chained.size() * sizeof(int)));
    fprintf(f, "tile %016llx\n", fnv(tout.data(), tout.size() * sizeof(float)));
    for (int v : scaled) fprintf(f, "scale %d\n", v);
    for (float v : sums) fprintf(f, "rowsum %a\n", v);
    fclose(f);
#ifdef HU_COST
    printf("cost: %llu edges\n", hu_cost_edges);
#endif
    printf("time: %.3f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
    return 0;
}
