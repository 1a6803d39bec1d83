/* The snapshot buffer: a triple buffer for several readers (snapshot.h). */
#include "snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "fureru/base.h"

int fri_tbuf_init(fri_tbuf *b, size_t slot_size, int max_readers)
{
    memset(b, 0, sizeof *b);
    if (max_readers < 1 || max_readers > FRI_TBUF_MAX_READERS || slot_size == 0)
        return FR_ERR_INVAL;
    slot_size = (slot_size + 63) & ~(size_t)63;
    b->nslots = max_readers + 2;
    b->slot_size = slot_size;
    b->mem = aligned_alloc(64, slot_size * (size_t)b->nslots);
    if (!b->mem) return FR_ERR_NOMEM;
    memset(b->mem, 0, slot_size * (size_t)b->nslots);
    b->back = 0;
    atomic_init(&b->latest, -1);
    for (int i = 0; i < FRI_TBUF_MAX_READERS + 2; i++) atomic_init(&b->refs[i], 0);
    atomic_init(&b->published, 0);
    return FR_OK;
}

void fri_tbuf_destroy(fri_tbuf *b)
{
    free(b->mem);
    b->mem = NULL;
}

void fri_tbuf_publish(fri_tbuf *b)
{
    /* seq_cst store, then seq_cst loads of the counts: a reader that counted itself into a slot
     * before this store is seen below; one that counts itself in later sees the new index when it
     * checks again and lets the old slot go (the two sides' store-then-load, Dekker's pattern) */
    atomic_store(&b->latest, b->back);
    atomic_fetch_add_explicit(&b->published, 1, memory_order_relaxed);
    int cur = b->back;
    for (int k = 1; k < b->nslots; k++) {
        int i = (cur + k) % b->nslots;
        if (atomic_load(&b->refs[i]) == 0) {
            b->back = i;
            return;
        }
    }
    /* unreachable: at most nslots − 2 slots are held and one is the newest */
    abort();
}

const void *fri_tbuf_acquire(fri_tbuf *b, int *slot)
{
    for (;;) {
        int i = atomic_load(&b->latest);
        if (i < 0) return NULL;
        atomic_fetch_add(&b->refs[i], 1);
        if (atomic_load(&b->latest) == i) {
            *slot = i;
            return b->mem + (size_t)i * b->slot_size;
        }
        atomic_fetch_sub(&b->refs[i], 1);
    }
}

void fri_tbuf_release(fri_tbuf *b, int slot)
{
    atomic_fetch_sub_explicit(&b->refs[slot], 1, memory_order_release);
}

uint64_t fri_tbuf_published(const fri_tbuf *b)
{
    return atomic_load_explicit(&((fri_tbuf *)b)->published, memory_order_relaxed);
}

size_t fri_snap_size(int nbodies, int max_contacts)
{
    size_t h = (sizeof(fri_snap) + 63) & ~(size_t)63;
    size_t bb = ((size_t)nbodies * sizeof(fr_pose) + 63) & ~(size_t)63;
    return h + bb + (size_t)max_contacts * sizeof(fri_snap_contact);
}

void fri_snap_layout(fri_tbuf *b, int nbodies, int max_contacts)
{
    size_t h = (sizeof(fri_snap) + 63) & ~(size_t)63;
    size_t bb = ((size_t)nbodies * sizeof(fr_pose) + 63) & ~(size_t)63;
    for (int i = 0; i < b->nslots; i++) {
        fri_snap *s = (fri_snap *)(b->mem + (size_t)i * b->slot_size);
        memset(s, 0, b->slot_size);
        s->nbodies = nbodies;
        s->max_contacts = max_contacts;
        s->bodies_off = (uint32_t)h;
        s->contacts_off = (uint32_t)(h + bb);
        s->slowmo = 1.0;
    }
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

uint64_t fri_snap_checksum(const fri_snap *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix(h, s, offsetof(fri_snap, checksum));
    h = mix(h, fri_snap_bodies_c(s), (size_t)s->nbodies * sizeof(fr_pose));
    int n = s->ncontacts < s->max_contacts ? s->ncontacts : s->max_contacts;
    if (n > 0) h = mix(h, fri_snap_contacts_c(s), (size_t)n * sizeof(fri_snap_contact));
    return h;
}
