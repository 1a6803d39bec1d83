/* The friction bond: static-friction anchors kept in each body's frame (docs/contact.md §3). */
#include <math.h>

#include "contact_internal.h"

/* Points are taken relative to B's centre, the positions' difference first (bodies in contact
 * are near each other: exact) and their rounding remainders with it (fr_contact_body.p_lo): read
 * through world coordinates, a bond 100 m from the origin held only 1.4e-14 m, which a stiff
 * bond's force turned into velocity above the solve's tolerance (a column there took two Newton
 * iterations a step instead of one). */
static fr_vec3 from_b(const fr_contact_body *b, fr_vec3 x)
{
    return fr_v3_sub(fr_v3_sub(x, b->pose.p), b->p_lo);
}

/* The drift of a point x (relative to B's centre; the body's centre is at `at` from it) over the
 * body's last turn about its rolling shape's centre, beyond the tangent the model moved it along.
 */
static fr_vec3 roll_drift(const fr_contact_body *s, fr_vec3 x, fr_vec3 at)
{
    if (s->roll_turn.x == 0.0 && s->roll_turn.y == 0.0 && s->roll_turn.z == 0.0)
        return fr_v3_zero(); /* (no rolling shape: the common case, without a square root) */
    const double th = fr_v3_norm(s->roll_turn);
    if (!(th > 1e-10)) return fr_v3_zero();
    const fr_vec3 k = fr_v3_scale(s->roll_turn, 1.0 / th);
    const fr_quat q = fr_q_axis_angle(k, 2.0 * atan(0.5 * th));
    /* lever from the shape's centre now, and before the turn */
    const fr_vec3 r = fr_v3_sub(fr_v3_sub(x, at), fr_v3_sub(s->roll_o, s->pose.p));
    const fr_vec3 r0 = fr_q_unrotate(q, r);
    return fr_v3_sub(fr_v3_sub(r, r0), fr_v3_cross(s->roll_turn, r0));
}

void fri_bond_read(const fr_contact_state *st, const fr_contact_body *a, const fr_contact_body *b,
                   fr_vec3 n, fr_vec3 c, fr_vec3 t1, fr_vec3 *u_out, double *phi_out,
                   fr_vec3 *eref_out, fr_vec3 *d_out)
{
    const fr_pose pa = a->pose, pb = b->pose;
    fr_vec3 u = fr_v3_zero(), eref = fr_v3_zero();
    double phi = 0.0;
    if (st->active) {
        /* A's anchor and B's, relative to B's centre */
        const fr_vec3 dab = fr_v3_add(fr_v3_sub(pa.p, pb.p), fr_v3_sub(a->p_lo, b->p_lo));
        fr_vec3 xa = fr_v3_add(fr_q_rotate(pa.q, st->anchor_a), dab);
        fr_vec3 xb = fr_q_rotate(pb.q, st->anchor_b);
        /* a rolling shape's anchor strayed along its last turn's arc about the shape's centre
         * (the pose turns by 2·atan(θ/2), the model moved it by θ × r): not a slip */
        xb = fr_v3_sub(xb, roll_drift(b, xb, fr_v3_zero()));
        xa = fr_v3_sub(xa, roll_drift(a, xa, dab));
        c = from_b(b, c);
        fr_vec3 ea = fr_q_rotate(pa.q, st->axis_a), eb = fr_q_rotate(pb.q, st->axis_b);
        ea = fr_v3_mad(ea, -fr_v3_dot(ea, n), n);
        eb = fr_v3_mad(eb, -fr_v3_dot(eb, n), n);
        double na = fr_v3_norm(ea), nb = fr_v3_norm(eb);
        if (na > 0.5 && nb > 0.5) {
            phi = atan2(fr_v3_dot(n, fr_v3_cross(eb, ea)), fr_v3_dot(eb, ea));
            eref = fr_v3_scale(eb, 1.0 / nb);
        }
        if (d_out) *d_out = fr_v3_sub(xa, xb);
        /* the bond is a planar rigid displacement: move its reference point to c */
        u = fr_v3_add(fr_v3_sub(xa, xb), fr_v3_scale(fr_v3_cross(n, fr_v3_sub(c, xa)), phi));
        u = fr_v3_mad(u, -fr_v3_dot(u, n), n);
    } else if (d_out)
        *d_out = fr_v3_zero();
    if (fr_v3_norm2(eref) == 0.0) eref = t1;
    *u_out = u;
    *phi_out = phi;
    *eref_out = eref;
}

void fri_bond_write(fr_contact_state *st, const fr_contact_body *a, const fr_contact_body *b,
                    fr_vec3 n, fr_vec3 c, fr_vec3 u, double phi, fr_vec3 eref)
{
    const fr_pose pa = a->pose, pb = b->pose;
    st->anchor_a = fr_q_unrotate(pa.q, fr_v3_sub(fr_v3_sub(c, pa.p), a->p_lo));
    st->anchor_b = fr_q_unrotate(pb.q, fr_v3_sub(from_b(b, c), u));
    fr_vec3 ea =
        fr_v3_add(fr_v3_scale(eref, cos(phi)), fr_v3_scale(fr_v3_cross(n, eref), sin(phi)));
    st->axis_a = fr_q_unrotate(pa.q, ea);
    st->axis_b = fr_q_unrotate(pb.q, eref);
}
