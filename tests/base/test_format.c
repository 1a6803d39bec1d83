/* src/base/format.c: fr_format_double gives the shortest text that reads back as the same double,
 * the closest such, checked against strtod and against an independent printf + strtod search. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"
#include "frtest.h"
#include "fureru/base.h"

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint64_t to_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* round trip + agreement with the reference; returns the significant digit count */
static void check_one(double v)
{
    char a[FR_FORMAT_DOUBLE_MAX], b[FR_FORMAT_DOUBLE_MAX];
    int n = fr_format_double(v, a);
    ck_assert_int_eq(n, (int)strlen(a));
    ck_assert_int_lt(n, FR_FORMAT_DOUBLE_MAX);
    char *end;
    double r = strtod(a, &end);
    ck_assert_msg(*end == 0, "'%s' is not all number", a);
    ck_assert_msg(to_bits(r) == to_bits(v), "%.17g -> '%s' reads back as %.17g", v, a, r);
    fri_format_double_slow(v, b);
    ck_assert_msg(strcmp(a, b) == 0, "%.17g: '%s', reference '%s'", v, a, b);
}

START_TEST(test_special_values)
{
    static const struct {
        double v;
        const char *s;
    } cases[] = {
        {0.0, "0"},
        {-0.0, "-0"},
        {1.0, "1"},
        {-2.5, "-2.5"},
        {0.1, "0.1"},
        {0.3, "0.3"},
        {1e-5, "0.00001"},
        {1.5e-6, "1.5e-06"},
        {123456.789, "123456.789"},
        {1e16, "10000000000000000"},
        {1e17, "1e+17"},
        {1e21, "1e+21"},
        {0.05, "0.05"},
        {9.81, "9.81"},
        {1.0 / 3, "0.3333333333333333"},
        {2.0 / 3, "0.6666666666666666"},
        {5e-324, "5e-324"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {DBL_MIN, "2.2250738585072014e-308"},
        {9007199254740993.0, "9007199254740992"},
        {-1e-300, "-1e-300"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char a[FR_FORMAT_DOUBLE_MAX];
        fr_format_double(cases[i].v, a);
        ck_assert_msg(strcmp(a, cases[i].s) == 0, "%.17g: '%s', expected '%s'", cases[i].v, a,
                      cases[i].s);
        check_one(cases[i].v);
    }
    char a[FR_FORMAT_DOUBLE_MAX];
    fr_format_double(NAN, a);
    ck_assert_str_eq(a, "nan");
    fr_format_double(INFINITY, a);
    ck_assert_str_eq(a, "inf");
    fr_format_double(-INFINITY, a);
    ck_assert_str_eq(a, "-inf");
}
END_TEST

/* every power of two (the irregular intervals, narrower below) and its neighbours, every
 * binade's ends, the subnormals' powers of two */
START_TEST(test_every_binade)
{
    for (uint64_t be = 0; be < 2047; be++) {
        uint64_t b = be << 52;
        if (be) check_one(from_bits(b));
        check_one(from_bits(b + 1));
        check_one(from_bits(b | ((1ull << 52) - 1)));
        if (be) check_one(-from_bits(b - 1 + (be == 0)));
    }
    for (int i = 0; i < 52; i++) check_one(from_bits(1ull << i));
    ck_assert_int_eq(fri_format_slow_count(), 0);
}
END_TEST

/* random bit patterns over the whole range, and values near the ones a log holds */
START_TEST(test_random_against_reference)
{
    frtest_rng r = {20261123};
    for (int i = 0; i < 10000; i++) {
        uint64_t b = frtest_next(&r);
        if (((b >> 52) & 0x7ff) == 0x7ff) continue;
        check_one(from_bits(b));
        check_one(frtest_uniform(&r, -10, 10) * pow(10, (int)(frtest_next(&r) % 20) - 10));
    }
    /* a simulation's quantities: multiples of dt, small integers plus noise */
    for (int i = 0; i <= 5000; i++) check_one(i * 0.001);
    ck_assert_int_eq(fri_format_slow_count(), 0);
}
END_TEST

/* short decimals come back as themselves: no digit more than the text they were read from */
START_TEST(test_short_decimals_stay_short)
{
    frtest_rng r = {7};
    for (int i = 0; i < 8000; i++) {
        int digits = 1 + (int)(frtest_next(&r) % 15);
        uint64_t m = frtest_next(&r) % 1000000000000000ull;
        uint64_t p = 1;
        for (int k = 0; k < digits; k++) p *= 10;
        m %= p;
        while (m && m % 10 == 0) m /= 10;
        if (!m) m = 7;
        char in[48], out[FR_FORMAT_DOUBLE_MAX];
        snprintf(in, sizeof in, "%llue%d", (unsigned long long)m,
                 (int)(frtest_next(&r) % 600) - 310);
        double v = strtod(in, NULL);
        if (v == 0 || isinf(v) || v < DBL_MIN) continue; /* subnormals may lose digits */
        fr_format_double(v, out);
        int sig = 0, lead = 1;
        for (const char *c = out; *c && *c != 'e'; c++) {
            if (*c < '0' || *c > '9') continue;
            if (*c == '0' && lead) continue;
            lead = 0;
            sig++;
        }
        /* trailing zeros of a plain integer are not significant */
        const char *e = strchr(out, 'e');
        if (!e && !strchr(out, '.'))
            for (const char *c = out + strlen(out) - 1; c > out && *c == '0'; c--) sig--;
        char mdig[32];
        int mlen = snprintf(mdig, sizeof mdig, "%llu", (unsigned long long)m);
        ck_assert_msg(sig <= mlen, "%s -> '%s' has %d digits", in, out, sig);
        check_one(v);
    }
}
END_TEST

static Suite *format_suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_special_values);
    tcase_add_test(tc, test_every_binade);
    tcase_add_test(tc, test_random_against_reference);
    tcase_add_test(tc, test_short_decimals_stay_short);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(format_suite)
