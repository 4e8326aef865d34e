/* prime: division-heavy loops. Follows eunomia-bpf/bpf-benchmark's prime.bpf.c (count the
 * primes below 10^4 by trial division up to the square root), with the divisor starting at 2
 * and the bound read from the input so that no compiler folds the loop. Input: u64 limit. */
#include "kernel.h"

KERNEL {
    (void)len;
    u64 limit = input_count(mem);
    u64 count = 0;
    for (u64 i = 2; i < limit; i++) {
        u64 prime = 1;
        for (u64 j = 2; j * j <= i; j++) {
            if (i % j == 0) {
                prime = 0;
                break;
            }
        }
        count += prime;
    }
    return count;
}
