/* The friction bond: static-friction anchors kept in each body's frame (docs/contact.md §3). */
#include <math.h>

#include "contact_internal.h"

void fri_bond_read(const fr_contact_state *st, fr_pose pa, fr_pose pb, fr_vec3 n, fr_vec3 c,
                   fr_vec3 t1, fr_vec3 *u_out, double *phi_out, fr_vec3 *eref_out)
{
    fr_vec3 u = fr_v3_zero(), eref = fr_v3_zero();
    double phi = 0.0;
    if (st->active) {
        fr_vec3 xa = fr_pose_apply(pa, st->anchor_a), xb = fr_pose_apply(pb, st->anchor_b);
        fr_vec3 ea = fr_q_rotate(pa.q, st->axis_a), eb = fr_q_rotate(pb.q, st->axis_b);
        ea = fr_v3_mad(ea, -fr_v3_dot(ea, n), n);
        eb = fr_v3_mad(eb, -fr_v3_dot(eb, n), n);
        double na = fr_v3_norm(ea), nb = fr_v3_norm(eb);
        if (na > 0.5 && nb > 0.5) {
            phi = atan2(fr_v3_dot(n, fr_v3_cross(eb, ea)), fr_v3_dot(eb, ea));
            eref = fr_v3_scale(eb, 1.0 / nb);
        }
        /* the bond is a planar rigid displacement: move its reference point to c */
        u = fr_v3_add(fr_v3_sub(xa, xb), fr_v3_scale(fr_v3_cross(n, fr_v3_sub(c, xa)), phi));
        u = fr_v3_mad(u, -fr_v3_dot(u, n), n);
    }
    if (fr_v3_norm2(eref) == 0.0) eref = t1;
    *u_out = u;
    *phi_out = phi;
    *eref_out = eref;
}

void fri_bond_write(fr_contact_state *st, fr_pose pa, fr_pose pb, fr_vec3 n, fr_vec3 c, fr_vec3 u,
                    double phi, fr_vec3 eref)
{
    st->anchor_a = fr_pose_apply_inv(pa, c);
    st->anchor_b = fr_pose_apply_inv(pb, fr_v3_sub(c, u));
    fr_vec3 ea =
        fr_v3_add(fr_v3_scale(eref, cos(phi)), fr_v3_scale(fr_v3_cross(n, eref), sin(phi)));
    st->axis_a = fr_q_unrotate(pa.q, ea);
    st->axis_b = fr_q_unrotate(pb.q, eref);
}
