// Namespaces opened and closed by macros (`BEGIN_LIB_NAMESPACE` defined in a header as
// `namespace lib {`). The grammar read `BEGIN_LIB_NAMESPACE namespace detail { ... }` as a
// function named `namespace` whose body was never lowered: `detail::sync_block` was lost and
// the loop calling it was a candidate with an unresolved call, a barrier missed. The macro's
// use is now skipped, and what follows it is in `lib` as the expansion puts it, so calls
// qualified from outside (`lib::reduce`, `::lib::detail::sync_block`) reach it. Also: a name
// defined nowhere before a class definition, an inline ABI namespace opened by a macro that
// uses another (`lib2::step` is `lib2::v2::step`), and namespace macros of this file.
#include "headers/lib_config.cuh"

#define BEGIN_HERE namespace here {
#define END_HERE }

BEGIN_LIB_NAMESPACE

namespace detail
{
template<class T, unsigned int Items>
LIB_DEVICE LIB_INLINE void sync_block(T (&values)[Items])
{
    __syncthreads();
}
} // namespace detail

template<bool Add, class T, unsigned int Items>
LIB_DEVICE void reduce(T (&values)[Items], T* out)
{
    for (unsigned int i = 0; i < Items; ++i) {  // ~ blockers: barrier
        detail::sync_block(values);
    }
    for (unsigned int i = 0; i < Items; ++i) {  // ~ blockers: atomic
        if LIB_IF_CONSTEXPR(Add) {
            atomicAdd(out, values[i]);
        }
    }
    for (unsigned int i = 0; i < Items; ++i) {  // ~ blockers: none
        values[i] *= 2;
    }
}

UNDEFINED_LIB_EXPORT
struct Stage
{
    LIB_DEVICE void wait() { __syncthreads(); }
};

END_LIB_NAMESPACE

LIB2_BEGIN
LIB_DEVICE void step(float* a)
{
    a[0] = 1.f;
    __syncthreads();
}
LIB2_END

BEGIN_HERE
LIB_DEVICE void count(int* c) { atomicAdd(c, 1); }
END_HERE
__global__ void k(float* out, int* c, int n)
{
    float v[4] = {0, 1, 2, 3};
    for (int i = 0; i < n; ++i) {  // ~ blockers: atomic, barrier
        lib::reduce<false>(v, out);
    }
    for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
        ::lib::detail::sync_block(v);
    }
    lib::Stage s;
    for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
        s.wait();
    }
    for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
        lib2::step(out);
    }
    for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
        here::count(c);
    }
    for (int i = 0; i < n; ++i) {  // ~ blockers: none
        out[i] = v[i & 3];
    }
}
