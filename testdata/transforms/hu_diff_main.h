// Differential runner for hip-unroll's tests: runs each original kernel and its unrolled
// variant over many ranges (empty, small, primes, powers of two, large, and next to the
// induction type's limits), several steps and grids, and requires the same trace of induction
// values and bit-identical float outputs. Include after the kernels and the `hu_cases` table.
#pragma once
#include "hip_host.h"

typedef void (*hu_kernel)(unsigned long long, unsigned long long, unsigned long long, float*, const float*);
struct hu_case {
    const char* name;
    hu_kernel orig;
    hu_kernel var;
    int bits;
    int is_signed;
};

struct hu_result {
    std::vector<unsigned long long> log;
    std::vector<float> out;
    bool overrun;
};

static hu_result hu_run_one(hu_kernel k, unsigned long long lo, unsigned long long hi, unsigned long long st, hu_dim3 g,
                            hu_dim3 b, const float* in, size_t cap) {
    hu_result r;
    hu_cap = cap;
    r.out.assign(64, 0.0f);
    hu_log.clear();
    r.overrun = false;
    try {
        hu_launch(g, b, k, lo, hi, st, r.out.data(), in);
    } catch (hu_overrun&) {
        r.overrun = true;
    }
    r.log = hu_log;
    return r;
}

static int hu_run_all(const hu_case* cases, int ncases, int large) {
    float in[64];
    for (int i = 0; i < 64; ++i) {
        // Values of very different magnitudes, so that a change of summation order shows.
        in[i] = (i % 7 == 0) ? 1.0e8f : (i % 5 == 0 ? -3.0e7f : 0.1f * (float)(i + 1) - 1.7f);
    }
    std::vector<long long> lens = {0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 31, 32, 33, 64, 97, 128, 257, 1000};
    if (large) lens.push_back(100003);
    const unsigned long long steps[] = {1, 3, 7, 0, 1000000007ull};
    const hu_dim3 grids[][2] = {{{1, 1, 1}, {1, 1, 1}}, {{2, 1, 1}, {3, 1, 1}}};
    int failures = 0;
    long long runs = 0;
    for (int c = 0; c < ncases; ++c) {
        const hu_case& k = cases[c];
        __int128 tmax = k.is_signed ? (((__int128)1 << (k.bits - 1)) - 1) : (((__int128)1 << k.bits) - 1);
        __int128 tmin = k.is_signed ? -((__int128)1 << (k.bits - 1)) : 0;
        for (long long len : lens) {
            __int128 bases[] = {0, -50, tmax - len - 2, tmax - len / 2, tmin, tmin + 3, tmax - 1000};
            for (__int128 base : bases) {
                if (base < tmin || base > tmax) continue;
                __int128 top = base + len;
                if (top > tmax) top = tmax;
                unsigned long long lo = (unsigned long long)(long long)base;
                unsigned long long hi = (unsigned long long)(long long)top;
                for (unsigned long long st : steps) {
                    // Long ranges: fewer steps and one grid, to keep the suite fast.
                    if (len > 1000 && st != 1 && st != 3) continue;
                    for (auto& gb : grids) {
                        if (len > 1000 && gb[1].x != 1) continue;
                        size_t cap = 4096 + 4 * (size_t)(len + 1) * gb[0].x * gb[1].x;
                        hu_result a = hu_run_one(k.orig, lo, hi, st, gb[0], gb[1], in, cap);
                        hu_result b = hu_run_one(k.var, lo, hi, st, gb[0], gb[1], in, cap);
                        ++runs;
                        bool same = a.overrun == b.overrun && a.log == b.log &&
                                    std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(float)) == 0;
                        if (!same) {
                            if (failures < 20) {
                                std::printf("MISMATCH %s lo=%lld hi=%lld step=%llu grid=%ux%u: trace %zu vs %zu entries%s%s\n",
                                            k.name, (long long)lo, (long long)hi, st, gb[0].x, gb[1].x, a.log.size(),
                                            b.log.size(), a.overrun != b.overrun ? ", overrun differs" : "",
                                            a.log == b.log ? ", outputs differ" : "");
                            }
                            ++failures;
                        }
                    }
                }
            }
        }
    }
    std::printf("cases=%d runs=%lld failures=%d\n", ncases, runs, failures);
    return failures == 0 ? 0 : 1;
}
