/*
 * Shortest round-trip formatting of doubles (fr_format_double): the fewest significant digits
 * that read back (strtod) to the same double, and among those the closest to it (ties: even
 * digit). The CSV logger formats every value with it: about 10× cheaper than printf("%.12g")
 * and exact where "%.12g" is not (bench/format measures both).
 *
 * The method is the pigeonhole one of R. Giulietti's Schubfach ("The Schubfach way to render
 * doubles", 2020), written here from the mathematics, with exact tests where it matters:
 *   v = c·2^q. Its rounding interval R (the reals that read back as v) has ends at the
 *   midpoints to its neighbours: in units of 2^(q−2) they are cbl = 4c − 2 (4c − 1 just above
 *   a power of two) and cbr = 4c + 2 around cb = 4c; R is closed when c is even.
 *   With k = ⌊log10 |R|⌋ at least one multiple of 10^k lies in R and at most one multiple of
 *   10^(k+1). Scaled by 10^−k (P = 2^q·10^−k, a 128-bit fixed-point number from a table),
 *   the ends and v become l, u, v' with floor and fraction known to 2^−62; whether each is an
 *   exact integer (or v' an exact half) is decided with integer arithmetic, so the few ties
 *   and boundary cases are exact. Then: the multiple of 10 between l and u, if any (shorter);
 *   else ⌊v'⌋ or ⌊v'⌋ + 1, whichever is in R and closer to v'.
 * A fraction within 2^−60 of an integer that is not exact cannot be decided from the fixed-point
 * value; that case (never seen: tests/base counts it) takes a slow path through printf and strtod.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"
#include "fureru/base.h"

__extension__ typedef unsigned __int128 u128;

enum { KMIN = -324, KMAX = 292, NK = KMAX - KMIN + 1 };

/* 10^−k ≈ g[k]·2^e[k] with g in [2^127, 2^128), rounded down */
static u128 g_pow[NK];
static int g_exp[NK];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static atomic_long g_slow;

/* ---------------------------------------------------------------- the table (start-up) */

/* little-endian base-2^32 big numbers, just enough for 10^324 and 2^1216 / 10^k */
enum { BN_WORDS = 40 };
typedef struct bn {
    uint32_t w[BN_WORDS];
    int n; /* words in use */
} bn;

static int bn_bits(const bn *a)
{
    int n = a->n;
    while (n > 0 && a->w[n - 1] == 0) n--;
    if (n == 0) return 0;
    return 32 * (n - 1) + (32 - __builtin_clz(a->w[n - 1]));
}

static void bn_mul10(bn *a)
{
    uint64_t carry = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->w[i] * 10 + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) a->w[a->n++] = (uint32_t)carry;
}

static void bn_div10(bn *a)
{
    uint64_t rem = 0;
    for (int i = a->n - 1; i >= 0; i--) {
        uint64_t t = (rem << 32) | a->w[i];
        a->w[i] = (uint32_t)(t / 10);
        rem = t % 10;
    }
}

/* ⌊a / 2^(bits − 128)⌋: the top 128 bits (a has at least 128 bits) */
static u128 bn_top128(const bn *a, int *shift)
{
    int bits = bn_bits(a);
    int s = bits - 128;
    u128 r = 0;
    for (int b = bits - 1; b >= s && b >= 0; b--) {
        r = (r << 1) | ((a->w[b / 32] >> (b % 32)) & 1u);
    }
    if (s < 0) r <<= -s;
    *shift = s;
    return r;
}

static void build_table(void)
{
    /* k <= 0: 10^m exactly, m = −k; the top 128 bits are ⌊10^m / 2^s⌋ */
    bn a = {{1}, 1};
    for (int m = 0; m <= -KMIN; m++) {
        int s;
        g_pow[-m - KMIN] = bn_top128(&a, &s);
        g_exp[-m - KMIN] = s;
        bn_mul10(&a);
    }
    /* k > 0: ⌊2^1216 / 10^k⌋ by repeated exact-floor division (⌊⌊x/a⌋/b⌋ = ⌊x/(ab)⌋) */
    bn b;
    memset(&b, 0, sizeof b);
    b.n = BN_WORDS;
    b.w[38] = 1; /* 2^1216 */
    for (int k = 1; k <= KMAX; k++) {
        bn_div10(&b);
        int s;
        g_pow[k - KMIN] = bn_top128(&b, &s);
        g_exp[k - KMIN] = s - 1216;
    }
}

/* ---------------------------------------------------------------- the fast path */

/* ⌊log10 2^q⌋ and ⌊log10 (3/4·2^q)⌋ for |q| <= 1100 (checked exhaustively in tests/base) */
static int floor_log10_pow2(int q, int irregular)
{
    int64_t x = (int64_t)q * 315653 - (irregular ? 130958 : 0);
    return (int)((x + ((int64_t)2000 << 20)) >> 20) - 2000;
}

/* Is X·2^(q−2)·10^(−k) an integer? */
static int scaled_is_integer(uint64_t X, int q, int k)
{
    if (X == 0) return 1;
    int tz = __builtin_ctzll(X);
    if (k <= 0) return q - 2 >= 0 || tz - k >= 2 - q;
    if (k > 27) return 0; /* 5^k > X */
    static const uint64_t pow5[28] = {1ull,
                                      5ull,
                                      25ull,
                                      125ull,
                                      625ull,
                                      3125ull,
                                      15625ull,
                                      78125ull,
                                      390625ull,
                                      1953125ull,
                                      9765625ull,
                                      48828125ull,
                                      244140625ull,
                                      1220703125ull,
                                      6103515625ull,
                                      30517578125ull,
                                      152587890625ull,
                                      762939453125ull,
                                      3814697265625ull,
                                      19073486328125ull,
                                      95367431640625ull,
                                      476837158203125ull,
                                      2384185791015625ull,
                                      11920928955078125ull,
                                      59604644775390625ull,
                                      298023223876953125ull,
                                      1490116119384765625ull,
                                      7450580596923828125ull};
    return tz + q - 2 - k >= 0 && X % pow5[k] == 0;
}

typedef struct scaled {
    uint64_t i; /* ⌊X·P/4⌋ */
    uint64_t f; /* fraction × 2^64 (0 when exact) */
    int exact;  /* X·P/4 is an integer */
    int unsure; /* fraction too close to 0 or 1 to decide */
} scaled;

/* X·2^(q−2)·10^−k = X·G·2^(e + q − 2), X < 2^57 */
static scaled scale(uint64_t X, u128 G, int e, int q, int k)
{
    scaled r = {0, 0, 0, 0};
    u128 lo = (u128)X * (uint64_t)G, hi = (u128)X * (uint64_t)(G >> 64);
    /* 192-bit product w2:w1:w0 */
    uint64_t w0 = (uint64_t)lo;
    u128 mid = (lo >> 64) + (uint64_t)hi;
    uint64_t w1 = (uint64_t)mid;
    uint64_t w2 = (uint64_t)((hi >> 64) + (mid >> 64));
    int s = 2 - q - e; /* value = product / 2^s, s in about [124, 131] */
    /* integer part = product >> s, fraction = (product >> (s − 64)) mod 2^64 */
    int t = s - 64;                   /* 60..67 */
    u128 top = ((u128)w2 << 64) | w1; /* product >> 64 */
    uint64_t frac;
    if (t < 64) { /* t >= 60 here */
        r.i = (uint64_t)(top >> t);
        frac = (uint64_t)(top << (64 - t)) | (w0 >> t);
    } else {
        r.i = (uint64_t)(top >> t);
        frac = (uint64_t)(top >> (t - 64));
    }
    r.f = frac;
    /* the computed value is below the true one by less than 2 units of 2^−64, so only a fraction
     * this close to an integer can be an exact integer, or undecidable */
    if (frac < 16 || frac > ~15ull) {
        r.exact = scaled_is_integer(X, q, k);
        if (r.exact) {
            if (frac > (1ull << 63)) r.i++; /* N came out as N − 2^−63 */
            r.f = 0;
        } else {
            r.unsure = 1;
        }
    }
    return r;
}

/* digits and decimal exponent of |v| > 0 (v = d·10^e10); 0 when the fast path cannot decide */
static int shortest(uint64_t c, int q, int irregular, int closed, uint64_t *d, int *e10)
{
    int k = floor_log10_pow2(q, irregular);
    if (k < KMIN || k > KMAX) return 0;
    u128 G = g_pow[k - KMIN];
    int e = g_exp[k - KMIN];
    uint64_t cb = c << 2, cbl = cb - (irregular ? 1 : 2), cbr = cb + 2;
    scaled v = scale(cb, G, e, q, k), l = scale(cbl, G, e, q, k), u = scale(cbr, G, e, q, k);
    if (v.unsure || l.unsure || u.unsure) return 0;
        /* integer n is in R: above l (or at it, closed) and below u (or at it, closed) */
#define IN_R(n)                                                                                    \
    (((n) > l.i || ((n) == l.i && l.exact && closed)) &&                                           \
     ((n) < u.i || ((n) == u.i && (!u.exact || closed))))
    /* a multiple of 10^(k+1) in R is shorter than anything else there (at most one exists) */
    uint64_t s10 = v.i / 10 * 10;
    if (IN_R(s10)) {
        *d = s10;
        *e10 = k;
        return 1;
    }
    if (IN_R(s10 + 10)) {
        *d = s10 + 10;
        *e10 = k;
        return 1;
    }
    uint64_t s = v.i;
    int lo_in = IN_R(s), hi_in = IN_R(s + 1);
#undef IN_R
    if (lo_in && hi_in) {
        /* the closer of s and s + 1 to v'; an exact half goes to the even one */
        /* only a fraction within 2^−60 of 1/2 can be an exact half (or undecidable) */
        int near_half = v.f > (1ull << 63) - 16 && v.f < (1ull << 63) + 16;
        int half = near_half && !v.exact && scaled_is_integer(cb << 1, q, k);
        if (near_half && !half) return 0;
        if (half)
            *d = (s & 1) ? s + 1 : s;
        else
            *d = (v.f >> 63) == 0 ? s : s + 1;
    } else if (lo_in) {
        *d = s;
    } else if (hi_in) {
        *d = s + 1;
    } else {
        return 0; /* cannot happen (pigeonhole); be safe */
    }
    *e10 = k;
    return 1;
}

/* ---------------------------------------------------------------- output */

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* 8 decimal digits of x < 10^8, with leading zeros, in 32-bit arithmetic */
static void write8(char *out, uint32_t x)
{
    uint32_t a = x / 10000, b = x % 10000;
    memcpy(out, digit_pairs + 2 * (a / 100), 2);
    memcpy(out + 2, digit_pairs + 2 * (a % 100), 2);
    memcpy(out + 4, digit_pairs + 2 * (b / 100), 2);
    memcpy(out + 6, digit_pairs + 2 * (b % 100), 2);
}

/* d·10^e10 (d < 10^17) as text: plain notation when the decimal exponent is in [−5, 16], else
 * d.ddde±XX. Built in a local buffer with fixed-size copies (no library calls), then copied out. */
static int render(char *buf, int neg, uint64_t d, int e10)
{
    /* 17 digits with leading zeros, then skip the leading and strip the trailing zeros */
    char dig[64];
    uint64_t rest = d % 10000000000000000ull;
    dig[0] = (char)('0' + d / 10000000000000000ull);
    write8(dig + 1, (uint32_t)(rest / 100000000));
    write8(dig + 9, (uint32_t)(rest % 100000000));
    const char *dp = dig;
    int n = 17;
    while (n > 1 && *dp == '0') {
        dp++;
        n--;
    }
    while (n > 1 && dp[n - 1] == '0') {
        n--;
        e10++;
    }
    memcpy(dig + 17, "0000000000000000000000000000000", 32); /* zeros for integers */
    int x = e10 + n - 1;                                     /* scientific exponent */
    char out[64];
    char *p = out;
    *p = '-';
    p += neg;
    if (x >= -5 && x <= 16) {
        if (e10 >= 0) { /* an integer: its digits then zeros */
            memcpy(p, dp, 24);
            if (e10 > 0) memcpy(p + n, dig + 17, 24);
            p += x + 1;
        } else if (x >= 0) { /* ddd.ddd */
            memcpy(p, dp, 24);
            p += x + 1;
            memcpy(p + 1, dp + x + 1, 24);
            *p = '.';
            p += n - x;
        } else { /* 0.000ddd */
            memcpy(p, "0.00000", 8);
            p += 1 - x;
            memcpy(p, dp, 24);
            p += n;
        }
    } else {
        *p = dp[0];
        p[1] = '.';
        memcpy(p + 2, dp + 1, 24);
        p += n > 1 ? n + 1 : 1;
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100) *p++ = (char)('0' + ax / 100);
        memcpy(p, digit_pairs + 2 * (ax % 100), 2);
        p += 2;
    }
    *p = 0;
    memcpy(buf, out, FR_FORMAT_DOUBLE_MAX);
    return (int)(p - out);
}

/* printf and strtod (both correctly rounded in glibc): the fewest digits that read back, the
 * closest such candidate to v */
int fri_format_double_slow(double v, char *buf)
{
    double a = fabs(v);
    for (int prec = 1; prec <= 17; prec++) {
        char t[40];
        snprintf(t, sizeof t, "%.*e", prec - 1, a);
        /* t = "D.DDDe±XX": the correctly rounded prec digits and its neighbours in the last digit
         */
        char *ep = strchr(t, 'e');
        int x = atoi(ep + 1);
        uint64_t dd = 0;
        for (const char *q = t; q < ep; q++)
            if (*q >= '0' && *q <= '9') dd = dd * 10 + (uint64_t)(*q - '0');
        int e10 = x - (prec - 1);
        uint64_t best = 0;
        int found = 0;
        for (int delta = 0; delta <= 1 && !found; delta++) {
            uint64_t cand[2] = {dd + (uint64_t)delta, dd - (uint64_t)delta};
            for (int j = 0; j < (delta ? 2 : 1) && !found; j++) {
                char s[48];
                snprintf(s, sizeof s, "%llue%d", (unsigned long long)cand[j], e10);
                if (strtod(s, NULL) == a) {
                    best = cand[j];
                    found = 1;
                }
            }
        }
        if (found) return render(buf, signbit(v) != 0, best, e10);
    }
    return snprintf(buf, FR_FORMAT_DOUBLE_MAX, "%.17g", v); /* not reached */
}

long fri_format_slow_count(void)
{
    return atomic_load(&g_slow);
}

int fr_format_double(double v, char *buf)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int neg = (int)(bits >> 63);
    int be = (int)((bits >> 52) & 0x7ff);
    uint64_t fr = bits & ((1ull << 52) - 1);
    if (be == 0x7ff) {
        const char *t = fr ? "nan" : (neg ? "-inf" : "inf");
        strcpy(buf, t);
        return (int)strlen(t);
    }
    if (be == 0 && fr == 0) {
        strcpy(buf, neg ? "-0" : "0");
        return neg ? 2 : 1;
    }
    uint64_t c = be ? (fr | (1ull << 52)) : fr;
    int q = be ? be - 1075 : -1074;
    /* integers below 2^53: their digits are the shortest representation */
    /* (larger integers have a gap above 1 and may have a shorter neighbour in their interval) */
    if (q <= 0 && q >= -52 && (c & ((1ull << -q) - 1)) == 0) return render(buf, neg, c >> -q, 0);
    pthread_once(&g_once, build_table);
    uint64_t d;
    int e10;
    if (!shortest(c, q, fr == 0 && be > 1, (c & 1) == 0, &d, &e10)) {
        atomic_fetch_add(&g_slow, 1);
        return fri_format_double_slow(v, buf);
    }
    return render(buf, neg, d, e10);
}
