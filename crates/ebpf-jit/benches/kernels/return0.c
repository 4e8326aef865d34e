/* return0: the fixed cost of one call on each engine (the public benchmark's "return
 * constant", eunomia-bpf/bpf-benchmark's simple.bpf.c): no input is read. */
#include "kernel.h"

KERNEL {
    (void)mem;
    (void)len;
    return 0;
}
