// hip-unroll-test: loop=8 factor=4 mode=manual
// A template index type: limits come from `decltype(j)`, asserted to be an integer type.
template <class J, class T>
__global__ void csr_row_sum(const J* row_ptr, const T* val, T* out, J row) {
    T sum = 0;
    const J begin = row_ptr[row];
    const J end = row_ptr[row + 1];
    for (J j = begin; j < end; ++j) {
        sum += val[j];
    }
    out[row] = sum;
}
template __global__ void csr_row_sum<int, float>(const int*, const float*, float*, int);
