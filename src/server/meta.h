/* The sidecar of a log, LOG.meta.yaml: what made the log (docs/scenes.md, "The sidecar"). */
#ifndef FR_SERVER_META_H
#define FR_SERVER_META_H

#include "fureru/server.h"

/* Written when the log is opened: version, command line, scene path and the scene after --set,
 * run options, the scene's analysis parameters. */
int fri_meta_write(const char *log_path, const fr_scene *scene, const fr_server_opts *opts,
                   int ncols, fr_diag *d);
/* Appended when the run ends: its outcome (`result:`). */
void fri_meta_append_result(const char *log_path, const fr_server_stats *st, int err);

#endif
