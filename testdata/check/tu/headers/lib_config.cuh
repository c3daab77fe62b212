// The configuration header of libraries that open their namespaces with macros (rocPRIM's
// `BEGIN_ROCPRIM_NAMESPACE`, TensorRT-LLM's `TRTLLM_NAMESPACE_BEGIN` with its inline ABI
// namespace) and qualify their functions with macros. It names no function itself.
#pragma once
#define BEGIN_LIB_NAMESPACE \
    namespace lib {
#define END_LIB_NAMESPACE \
    } /* lib */
#define LIB_DEVICE __device__
#define LIB_INLINE inline
#if __cpp_if_constexpr >= 201606
#define LIB_IF_CONSTEXPR constexpr
#else
#define LIB_IF_CONSTEXPR
#endif

#ifndef LIB2_ABI
#define LIB2_ABI v2
#endif
#define LIB2_ABI_BEGIN inline namespace LIB2_ABI {
#define LIB2_ABI_END }
#define LIB2_BEGIN \
    namespace lib2 { \
    LIB2_ABI_BEGIN
#define LIB2_END \
    LIB2_ABI_END \
    } /* lib2 */

// Shared memory through macros (rocPRIM's `ROCPRIM_SHARED_MEMORY`).
#define LIB_SHARED __shared__
#define LIB_DYNAMIC_SHARED extern __shared__
