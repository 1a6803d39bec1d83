/*
 * The snapshot buffer under stress (TAP): one writer publishes N snapshots (default 10^7) as fast
 * as it can while two readers take the newest one over and over. Every snapshot the writer fills
 * carries its publish number and a checksum of its contents written by the writer; a reader that
 * saw a torn snapshot (a slot the writer was filling) would find the checksum wrong, and one that
 * went back in time would see the number fall. Also built with ThreadSanitizer (tbuf-tsan).
 *
 * Then the real snapshot type: fri_snap laid out in the buffer, published with a checksum
 * (fri_snap_checksum) and read back by two readers.
 *
 * Usage: test_tbuf [PUBLISHES]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

enum { WORDS = 30 };
typedef struct payload {
    uint64_t seq;
    uint64_t w[WORDS];
    uint64_t sum;
} payload;

static uint64_t payload_sum(const payload *p)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ p->seq;
    for (int i = 0; i < WORDS; i++) h = (h ^ p->w[i]) * 0x100000001b3ull;
    return h;
}

typedef struct shared {
    fri_tbuf buf;
    atomic_bool done;
    int real; /* 1: the buffer holds fri_snap */
} shared;

typedef struct reader {
    shared *sh;
    pthread_t th;
    uint64_t reads, bad, backwards, distinct, last;
} reader;

static void *reader_main(void *arg)
{
    reader *r = arg;
    shared *sh = r->sh;
    for (;;) {
        bool finished = atomic_load(&sh->done);
        int slot;
        const void *p = fri_tbuf_acquire(&sh->buf, &slot);
        if (p) {
            uint64_t seq;
            if (sh->real) {
                const fri_snap *s = p;
                seq = s->seq;
                if (fri_snap_checksum(s) != s->checksum) r->bad++;
            } else {
                const payload *q = p;
                seq = q->seq;
                if (payload_sum(q) != q->sum) r->bad++;
            }
            if (seq < r->last) r->backwards++;
            if (seq != r->last) r->distinct++;
            r->last = seq;
            r->reads++;
            fri_tbuf_release(&sh->buf, slot);
        }
        if (finished) break;
    }
    return NULL;
}

static int run(shared *sh, uint64_t n, int *tap)
{
    reader rd[2];
    atomic_init(&sh->done, false);
    for (int i = 0; i < 2; i++) {
        memset(&rd[i], 0, sizeof rd[i]);
        rd[i].sh = sh;
        if (pthread_create(&rd[i].th, NULL, reader_main, &rd[i]) != 0) return 1;
    }
    uint64_t x = 88172645463325252ull;
    for (uint64_t k = 1; k <= n; k++) {
        if (sh->real) {
            fri_snap *s = fri_tbuf_back(&sh->buf);
            s->seq = k;
            s->tick = k;
            s->time = (double)k * 1e-3;
            fr_pose *b = fri_snap_bodies(s);
            for (int i = 0; i < s->nbodies; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                b[i].p.x = (double)(x >> 11);
                b[i].q.w = (double)k;
            }
            s->ncontacts = (int)(k % (uint64_t)(s->max_contacts + 1));
            fri_snap_contact *c = fri_snap_contacts(s);
            for (int i = 0; i < s->ncontacts; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                c[i].force.z = (double)(x >> 11);
                c[i].body_a = (int)k;
            }
            s->checksum = fri_snap_checksum(s);
        } else {
            payload *p = fri_tbuf_back(&sh->buf);
            p->seq = k;
            for (int i = 0; i < WORDS; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                p->w[i] = x;
            }
            p->sum = payload_sum(p);
        }
        fri_tbuf_publish(&sh->buf);
    }
    atomic_store(&sh->done, true);
    int fail = 0;
    for (int i = 0; i < 2; i++) {
        pthread_join(rd[i].th, NULL);
        bool ok = rd[i].bad == 0 && rd[i].backwards == 0 && rd[i].reads > 0 && rd[i].last == n;
        printf("%s %d - %s: reader %d: %llu reads, %llu distinct snapshots, %llu torn, %llu went "
               "back, last %llu of %llu\n",
               ok ? "ok" : "not ok", ++*tap, sh->real ? "fri_snap" : "payload", i,
               (unsigned long long)rd[i].reads, (unsigned long long)rd[i].distinct,
               (unsigned long long)rd[i].bad, (unsigned long long)rd[i].backwards,
               (unsigned long long)rd[i].last, (unsigned long long)n);
        fail |= !ok;
    }
    bool pub = fri_tbuf_published(&sh->buf) == n;
    printf("%s %d - %llu publishes\n", pub ? "ok" : "not ok", ++*tap,
           (unsigned long long)fri_tbuf_published(&sh->buf));
    return fail | !pub;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
    int tap = 0, fail = 0;
    printf("1..6\n");
    static shared sh;
    if (fri_tbuf_init(&sh.buf, sizeof(payload), 2)) return 1;
    sh.real = 0;
    fail |= run(&sh, n, &tap);
    fri_tbuf_destroy(&sh.buf);

    int nb = 40, nc = 64;
    if (fri_tbuf_init(&sh.buf, fri_snap_size(nb, nc), 2)) return 1;
    fri_snap_layout(&sh.buf, nb, nc);
    sh.real = 1;
    fail |= run(&sh, n / 20 + 1, &tap);
    fri_tbuf_destroy(&sh.buf);
    return fail;
}
