// A specifier macro, vLLM style, used by the headers and files that include this one.
#pragma once
#define DINLINE __device__ __forceinline__
