/* gnuplot for publication plots: PDF and SVG (vector) and PNG of one script (lab.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab.h"

/* gnuplot's stderr, shown only when it fails: its warnings on a script of ours ("Skipping data
 * file with no valid points" on a failed run's log) are ours to avoid, not the user's to read.
 * One plot at a time (start-up code, one thread). */
static char plot_err[64];

FILE *fri_plot_open(void)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr,
                "fureru: gnuplot not found: no plot (Debian: apt-get install gnuplot-nox)\n");
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(plot_err, sizeof plot_err, "%.40s/fureru-gnuplot-XXXXXX",
             tmp && tmp[0] && strlen(tmp) <= 40 && !strchr(tmp, '\'') ? tmp : "/tmp");
    int fd = mkstemp(plot_err);
    char cmd[128] = "gnuplot";
    if (fd >= 0) {
        close(fd);
        snprintf(cmd, sizeof cmd, "gnuplot 2>'%s'", plot_err);
    } else {
        plot_err[0] = 0;
    }
    FILE *gp = popen(cmd, "w");
    if (!gp) {
        if (plot_err[0]) unlink(plot_err);
        return NULL;
    }
    fputs("set encoding utf8\n", gp);
    return gp;
}

int fri_plot_close(FILE *gp)
{
    const int rc = gp && pclose(gp) == 0 ? 0 : -1;
    if (plot_err[0]) {
        FILE *e = rc ? fopen(plot_err, "r") : NULL;
        if (e) {
            char line[512];
            while (fgets(line, sizeof line, e)) fprintf(stderr, "gnuplot: %s", line);
            fclose(e);
        }
        unlink(plot_err);
        plot_err[0] = 0;
    }
    return rc;
}

void fri_plot_quote(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

void fri_plot_escape(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; *in && k + 3 < n; in++) {
        if (strchr("_^{}@&~\\", *in)) out[k++] = '\\';
        out[k++] = *in;
    }
    out[k] = 0;
}

void fri_plot_outputs(FILE *gp, const char *base, const char *body)
{
    static const char *const term[][2] = {
        {"pdf", "set terminal pdfcairo size 16cm,10cm font 'DejaVu Sans,9' enhanced"},
        {"svg", "set terminal svg size 900,560 dynamic enhanced font 'DejaVu Sans,12' "
                "background '#ffffff'"},
        {"png", "set terminal pngcairo size 1350,840 font 'DejaVu Sans,12' enhanced"},
    };
    for (size_t i = 0; i < sizeof term / sizeof term[0]; i++) {
        fprintf(gp, "%s\n", term[i][1]);
        char out[4200];
        snprintf(out, sizeof out, "%s.%s", base, term[i][0]);
        fputs("set output ", gp);
        fri_plot_quote(gp, out);
        fputc('\n', gp);
        fputs(body, gp);
        fputs("unset output\n", gp);
    }
}
