/* Two boxes and what building a contact model between them needs, shared by the model tests
 * (test_advance.c, test_tangent.c): A a 2 × 2 × 1 m slab, B the box of half-extents hb on it,
 * the mass-scaled gains of a 1 kg pair at dt 5 ms with the world's stiffening depth. */
#ifndef FR_TESTS_BOX_RIG_H
#define FR_TESTS_BOX_RIG_H

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/contact.h"

static const double DT = 0.005;
static const double DS = 2.45e-6; /* the world's stiffening depth at dt 5 ms, κ 100: g·dt²/κ */

typedef struct rig {
    fr_shape *a, *b;
    fr_vec3 ha, hb;
    fr_collide_work w;
    fr_polyhedron_out out;
    fr_contact_model scratch;
    fr_contact_params p;
} rig;

static inline rig rig_make_box(fr_vec3 hb)
{
    rig r = {.ha = fr_v3(1.0, 1.0, 0.5), .hb = hb};
    ck_assert_int_eq(fr_shape_create_box(r.ha, &r.a), FR_OK);
    ck_assert_int_eq(fr_shape_create_box(r.hb, &r.b), FR_OK);
    const fr_shape *all[2] = {r.a, r.b};
    int mf = fr_shapes_max_faces(all, 2);
    ck_assert_int_eq(fr_collide_work_init(&r.w, mf, NULL), FR_OK);
    ck_assert_int_eq(fr_polyhedron_out_init(&r.out, mf, NULL), FR_OK);
    r.p = fr_contact_params_scaled(1.0, DT, 0, -1, 0.5, 0.5);
    r.p.stiffen_depth = DS;
    return r;
}

static inline void rig_free(rig *r)
{
    fr_collide_work_free(&r->w);
    fr_polyhedron_out_free(&r->out);
    fr_shape_destroy(r->a);
    fr_shape_destroy(r->b);
}

static inline fr_contact_body at(fr_pose p)
{
    return (fr_contact_body){p, fr_v3_zero(), fr_v3_zero(), fr_v3_zero()};
}

/* The model from the geometry at pa, pb with the state st (the bond as it is). */
static inline void build(rig *r, fr_pose pa, fr_pose pb, fr_contact_state *st, fr_contact_model *m)
{
    fr_collide_cache cache = {0};
    ck_assert_int_eq(fr_collide_pair(r->a, pa, r->b, pb, &cache, &r->w, &r->out), 1);
    fr_contact_body A = at(pa), B = at(pb);
    ck_assert_int_eq(fr_contact_model_build(&r->p, &r->out, 0.0, NULL, 0.0, &A, &B, DT, st, m),
                     FR_OK);
    ck_assert(m->area > 0.0);
}

#endif
