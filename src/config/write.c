/* YAML output of a config tree (fr_cfg_write): what the sidecar of a log records as the scene
 * that ran. Plain scalars stay plain when YAML reads them back unchanged, else double-quoted. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fureru/config.h"

/* in a flow sequence ([a, b]) commas and brackets end a plain scalar; in a block they do not */
static bool plain_ok(const char *s, bool flow)
{
    size_t n = strlen(s);
    if (n == 0 || s[0] == ' ' || s[n - 1] == ' ' || s[n - 1] == ':') return false;
    if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0]) && !(s[0] == '-' && n > 1 && s[1] != ' '))
        return false;
    if (!strcmp(s, "null") || !strcmp(s, "~")) return false; /* would read back as null */
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f) return false;
        if (flow && strchr("[]{},", c)) return false;
        if (c == ':' && (p[1] == ' ' || p[1] == 0)) return false;
        if (c == '#' && p > s && p[-1] == ' ') return false;
    }
    return true;
}

static void write_scalar(const char *s, bool quoted, bool flow, FILE *out)
{
    if (!quoted && plain_ok(s, flow)) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\x%02x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void fr_cfg_write_string(const char *s, FILE *out)
{
    write_scalar(s ? s : "", false, true, out);
}

static void write_inline(const fr_cfg_node *n, bool flow, FILE *out)
{
    if (fr_cfg_node_kind(n) == FR_CFG_NULL)
        fputs("null", out);
    else
        write_scalar(fr_cfg_node_scalar(n), fr_cfg_node_quoted(n), flow, out);
}

static bool all_scalars(const fr_cfg_node *n)
{
    for (int i = 0; i < fr_cfg_node_len(n); i++) {
        fr_cfg_kind k = fr_cfg_node_kind(fr_cfg_node_item(n, i));
        if (k != FR_CFG_SCALAR && k != FR_CFG_NULL) return false;
    }
    return true;
}

static void write_block(const fr_cfg_node *n, FILE *out, int indent, bool first_inline);

/* after "key:" or "-": the value, inline or as a block below */
static void write_value(const fr_cfg_node *v, FILE *out, int indent, bool in_seq)
{
    fr_cfg_kind k = fr_cfg_node_kind(v);
    if (k == FR_CFG_SCALAR || k == FR_CFG_NULL) {
        fputc(' ', out);
        write_inline(v, false, out);
        fputc('\n', out);
    } else if (fr_cfg_node_len(v) == 0) {
        fputs(k == FR_CFG_MAP ? " {}\n" : " []\n", out);
    } else if (k == FR_CFG_SEQ && all_scalars(v)) {
        fputs(" [", out);
        for (int i = 0; i < fr_cfg_node_len(v); i++) {
            if (i) fputs(", ", out);
            write_inline(fr_cfg_node_item(v, i), true, out);
        }
        fputs("]\n", out);
    } else if (in_seq && k == FR_CFG_MAP) {
        fputc(' ', out); /* "- key: value" with the other keys below it */
        write_block(v, out, indent + 2, true);
    } else {
        fputc('\n', out);
        write_block(v, out, indent + 2, false);
    }
}

static void write_block(const fr_cfg_node *n, FILE *out, int indent, bool first_inline)
{
    for (int i = 0; i < fr_cfg_node_len(n); i++) {
        if (i || !first_inline) fprintf(out, "%*s", indent, "");
        const fr_cfg_node *v = fr_cfg_node_item(n, i);
        if (fr_cfg_node_kind(n) == FR_CFG_MAP) {
            write_scalar(fr_cfg_node_key(n, i), false, true, out);
            fputc(':', out);
            write_value(v, out, indent, false);
        } else {
            fputc('-', out);
            write_value(v, out, indent, true);
        }
    }
}

void fr_cfg_write(const fr_cfg_node *n, FILE *out, int indent)
{
    if (!n) return;
    fr_cfg_kind k = fr_cfg_node_kind(n);
    if (k == FR_CFG_SCALAR || k == FR_CFG_NULL) {
        write_inline(n, false, out);
        fputc('\n', out);
    } else if (fr_cfg_node_len(n) == 0) {
        fputs(k == FR_CFG_MAP ? "{}\n" : "[]\n", out);
    } else {
        write_block(n, out, indent, false);
    }
}
