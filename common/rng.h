/*
 * rng.h - splitmix64, the one random generator of the harness and its CPU
 * tests, for host and device code alike: the inputs (device.cu, ops/op_gemv.c),
 * the points kl_spot_check picks (check.c), the tests' random values
 * (tests/unit_*.c).  Counter-based: value n of a seed needs no other value,
 * so element i gets the same number whatever the launch shape, thread count
 * or GPU.
 */
#ifndef KL_RNG_H
#define KL_RNG_H

#include <stdint.h>

#if defined(__CUDACC__)
#define KL_RNG_FN static __host__ __device__ __forceinline__
#else
#define KL_RNG_FN static inline
#endif

#define KL_SPLITMIX64_GAMMA 0x9E3779B97F4A7C15ull   /* 2^64 / the golden ratio */

/* Output n (n >= 1) of splitmix64 started at state `seed`: the state
 * advances by GAMMA per output, and each state is mixed.  kl_splitmix64(0, 1)
 * is 0xE220A8397B1DCDAF, the reference implementation's first output. */
KL_RNG_FN uint64_t kl_splitmix64(uint64_t seed, uint64_t n) {
    uint64_t z = seed + KL_SPLITMIX64_GAMMA * n;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif /* KL_RNG_H */
