// A call through a pointer that no name answers, in a unit that takes no function's address:
// nothing visible can be its target; the loop stays a candidate and lists the call, as written,
// as unresolved.
#include <hip/hip_runtime.h>

typedef void (*Op)(float*);
struct Ops {
  Op table[4];
};

__global__ void dispatch(float* a, const Ops* ops, int n) {
  for (int i = 0; i < n; ++i) ops->table[i & 3](a);  // ~ blockers: none
  // ~^ unresolved: ops->table[i&3]
}
