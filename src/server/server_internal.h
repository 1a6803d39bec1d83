/* Server internals visible to tests. */
#ifndef FR_SERVER_INTERNAL_H
#define FR_SERVER_INTERNAL_H

#include <pthread.h>

#include "fureru/server.h"
#include "snapshot.h"

/* Concurrent snapshot readers the buffer serves (the viewer, tests). */
enum { FRI_SERVER_SNAP_READERS = 2 };

/* Run hook(arg) once on the tick thread after its start-up, before the first tick. */
void fri_server_set_tick_hook(fr_server *s, void (*hook)(void *), void *arg);
pthread_t fri_server_tick_thread(const fr_server *s);
/* The snapshots the tick thread publishes every tick, and their constant model (valid from
 * create to destroy). */
fri_tbuf *fri_server_snapshots(fr_server *s);
const fri_snap_model *fri_server_model(const fr_server *s);

#endif
