/* switch: dispatch over a dense switch of 64 cases (plus a default) driven by input bytes.
 * Follows eunomia-bpf/bpf-benchmark's switch.bpf.c (64 dense cases, randomly chosen per case);
 * here each case does a different operation on the accumulator rather than producing a
 * constant, so no compiler can turn the switch into a table lookup and every engine
 * dispatches. Input: u64 n, then n bytes (values 0..79: some hit the default). */
#include "kernel.h"

KERNEL {
    (void)len;
    u64 n = input_count(mem);
    const u8 *ops = mem + 8;
    u64 h = 0x9e3779b97f4a7c15ULL;
    for (u64 i = 0; i < n; i++) {
        switch (ops[i]) {
        case 0:
            h += 31206;
            break;
        case 1:
            h ^= 40173;
            break;
        case 2:
            h = h * 707 + 60295;
            break;
        case 3:
            h = (h << 9) | (h >> 55);
            break;
        case 4:
            h -= h >> 26;
            break;
        case 5:
            h ^= h << 25;
            break;
        case 6:
            h = (h ^ 13197) * 719;
            break;
        case 7:
            h += h >> 5;
            break;
        case 8:
            h += 5231;
            break;
        case 9:
            h ^= 28839;
            break;
        case 10:
            h = h * 89 + 1613;
            break;
        case 11:
            h = (h << 1) | (h >> 63);
            break;
        case 12:
            h -= h >> 6;
            break;
        case 13:
            h ^= h << 2;
            break;
        case 14:
            h = (h ^ 62262) * 607;
            break;
        case 15:
            h += h >> 7;
            break;
        case 16:
            h += 5822;
            break;
        case 17:
            h ^= 50442;
            break;
        case 18:
            h = h * 221 + 58435;
            break;
        case 19:
            h = (h << 18) | (h >> 46);
            break;
        case 20:
            h -= h >> 17;
            break;
        case 21:
            h ^= h << 12;
            break;
        case 22:
            h = (h ^ 45113) * 501;
            break;
        case 23:
            h += h >> 1;
            break;
        case 24:
            h += 15152;
            break;
        case 25:
            h ^= 13992;
            break;
        case 26:
            h = h * 291 + 42036;
            break;
        case 27:
            h = (h << 27) | (h >> 37);
            break;
        case 28:
            h -= h >> 24;
            break;
        case 29:
            h ^= h << 10;
            break;
        case 30:
            h = (h ^ 57336) * 881;
            break;
        case 31:
            h += h >> 10;
            break;
        case 32:
            h += 14600;
            break;
        case 33:
            h ^= 37305;
            break;
        case 34:
            h = h * 989 + 59592;
            break;
        case 35:
            h = (h << 5) | (h >> 59);
            break;
        case 36:
            h -= h >> 14;
            break;
        case 37:
            h ^= h << 10;
            break;
        case 38:
            h = (h ^ 46460) * 385;
            break;
        case 39:
            h += h >> 27;
            break;
        case 40:
            h += 11763;
            break;
        case 41:
            h ^= 8333;
            break;
        case 42:
            h = h * 945 + 7872;
            break;
        case 43:
            h = (h << 6) | (h >> 58);
            break;
        case 44:
            h -= h >> 18;
            break;
        case 45:
            h ^= h << 14;
            break;
        case 46:
            h = (h ^ 63625) * 809;
            break;
        case 47:
            h += h >> 16;
            break;
        case 48:
            h += 20818;
            break;
        case 49:
            h ^= 46287;
            break;
        case 50:
            h = h * 707 + 48939;
            break;
        case 51:
            h = (h << 28) | (h >> 36);
            break;
        case 52:
            h -= h >> 27;
            break;
        case 53:
            h ^= h << 25;
            break;
        case 54:
            h = (h ^ 47768) * 785;
            break;
        case 55:
            h += h >> 10;
            break;
        case 56:
            h += 40851;
            break;
        case 57:
            h ^= 57115;
            break;
        case 58:
            h = h * 385 + 25364;
            break;
        case 59:
            h = (h << 1) | (h >> 63);
            break;
        case 60:
            h -= h >> 30;
            break;
        case 61:
            h ^= h << 21;
            break;
        case 62:
            h = (h ^ 40235) * 789;
            break;
        case 63:
            h += h >> 6;
            break;
        default:
            h = ~h;
            break;
        }
    }
    return h;
}
