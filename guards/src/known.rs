//! Calls known by name (`frontend::known`: the HIP/CUDA device API and the C/C++ library) or
//! recognised by a rule (barriers, atomics): never listed as `unresolved` on a loop.

use frontend::Call;

/// True when `c` is a barrier, an atomic, or a function known by name.
pub(crate) fn is_known_call(c: &Call) -> bool {
    crate::rules::barrier::is_barrier_call(c)
        || crate::rules::atomic::is_atomic_call(c)
        || frontend::known::is_known_function(
            &c.callee,
            c.qualifier.as_deref(),
            c.receiver.is_some(),
        )
}
