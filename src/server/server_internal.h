/* Server internals visible to tests. */
#ifndef FR_SERVER_INTERNAL_H
#define FR_SERVER_INTERNAL_H

#include <pthread.h>

#include "fureru/server.h"

/* Run hook(arg) once on the tick thread after its start-up, before the first tick. */
void fri_server_set_tick_hook(fr_server *s, void (*hook)(void *), void *arg);
pthread_t fri_server_tick_thread(const fr_server *s);

#endif
