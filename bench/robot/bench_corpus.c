/* Step time of every robot of the URDF corpus (config/robots, tests/robots/corpus/corpus.yaml),
 * dropped limp and held by joint PD (tests/robots/corpus_drop.c): thread CPU time per world step,
 * median of 3 runs of 5 s each. Also the 12-DOF quadruped with mesh collisions (Solo 12) at several
 * hull vertex budgets.
 *   bench_corpus SOURCE_ROOT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_drop.h"
#include "fureru/config.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_run(const char *scene, const char *urdf, bool pd, const char *extra,
                         corpus_run *last)
{
    double t[3];
    for (int k = 0; k < 3; k++) {
        if (corpus_drop(scene, urdf, pd, 5.0, extra, last)) return -1;
        t[k] = last->cpu_per_step;
    }
    qsort(t, 3, sizeof t[0], cmp);
    return t[1];
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : ".";
    char manifest[4096], scene[4096];
    snprintf(manifest, sizeof manifest, "%s/tests/robots/corpus/corpus.yaml", root);
    snprintf(scene, sizeof scene, "%s/tests/robots/corpus/drop.yaml", root);
    fr_cfg_doc *doc;
    fr_diag d;
    if (fr_cfg_load_file(manifest, &doc, &d)) {
        fr_diag_print(&d, stderr);
        return 2;
    }
    const fr_cfg_node *list = fr_cfg_get(fr_cfg_root(doc), "robots");
    printf("%-9s %-18s %5s %4s %12s %12s %9s\n", "robot", "class", "links", "dof", "limp us/step",
           "pd us/step", "contacts");
    for (int i = 0; i < fr_cfg_node_len(list); i++) {
        const fr_cfg_node *r = fr_cfg_node_item(list, i);
        char urdf[4096];
        snprintf(urdf, sizeof urdf, "%s/%s", root, fr_cfg_node_scalar(fr_cfg_get(r, "urdf")));
        corpus_run a, b;
        double limp = median_run(scene, urdf, false, NULL, &a),
               pd = median_run(scene, urdf, true, NULL, &b);
        printf("%-9s %-18s %5d %4d %12.1f %12.1f %4d/%-4d\n",
               fr_cfg_node_scalar(fr_cfg_get(r, "name")),
               fr_cfg_node_scalar(fr_cfg_get(r, "class")), a.links, a.dof, limp * 1e6, pd * 1e6,
               a.contacts_max, b.contacts_max);
        fflush(stdout);
    }
    fr_cfg_free(doc);
    printf("\nSolo 12 (mesh collisions on every leg), hull vertex budget:\n");
    char solo[4096];
    snprintf(solo, sizeof solo,
             "%s/config/robots/example-robot-data/robots/solo_description/robots/solo12.urdf",
             root);
    const int budgets[] = {16, 32, 64, 128, 0};
    for (int k = 0; k < 5; k++) {
        char set[64];
        snprintf(set, sizeof set, "robots.0.hull_vertices=%d", budgets[k]);
        corpus_run a, b;
        double limp = median_run(scene, solo, false, set, &a),
               pd = median_run(scene, solo, true, set, &b);
        printf("  %-8s limp %6.1f us/step, pd %6.1f us/step\n", budgets[k] ? set + 23 : "all",
               limp * 1e6, pd * 1e6);
        fflush(stdout);
    }
    return 0;
}
