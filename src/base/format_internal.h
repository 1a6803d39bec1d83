/* For tests/base: the slow reference path of fr_format_double and how often the fast path fell
 * back to it. */
#ifndef FR_BASE_FORMAT_INTERNAL_H
#define FR_BASE_FORMAT_INTERNAL_H

/* printf + strtod: the fewest digits that read back, the closest such (same output rules). */
int fri_format_double_slow(double v, char *buf);
long fri_format_slow_count(void);

#endif
