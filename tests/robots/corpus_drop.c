/* See corpus_drop.h. */
#include "corpus_drop.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fureru/scene.h"
#include "fureru/urdf.h"

/* The lowest point of the robot's collision shapes at its default pose, base at the origin. */
static int lowest_point(const char *path, double *zmin)
{
    fr_urdf *u;
    fr_diag d;
    int err = fr_urdf_load_file(path, &u, &d);
    if (err) return err;
    fr_tree *t;
    if ((err = fr_urdf_build_tree(u, NULL, &t, NULL))) {
        fr_urdf_destroy(u);
        return err;
    }
    fr_tree_data *td = fr_tree_data_create(t);
    *zmin = INFINITY;
    for (int i = 0; td && i < fr_urdf_link_count(u); i++) {
        const fr_urdf_link *L = fr_urdf_link_at(u, i);
        for (int c = 0; c < L->ncollisions; c++) {
            fr_shape *s;
            if (fr_urdf_collision_shape(&L->collisions[c], 0, &s)) continue;
            for (int v = 0; v < s->poly.nverts; v++) {
                fr_vec3 p = fr_pose_apply(td->pose[i],
                                          fr_pose_apply(L->collisions[c].origin, s->poly.verts[v]));
                if (p.z < *zmin) *zmin = p.z;
            }
            fr_shape_destroy(s);
        }
    }
    fr_tree_data_destroy(td);
    fr_tree_destroy(t);
    fr_urdf_destroy(u);
    return isfinite(*zmin) ? FR_OK : FR_ERR_INVAL;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int corpus_drop(const char *scene, const char *urdf, bool pd, double seconds, const char *extra,
                corpus_run *out)
{
    memset(out, 0, sizeof *out);
    char s_urdf[4200], s_pos[200], s_ctl[200];
    double zmin;
    int err = lowest_point(urdf, &zmin);
    if (err) return err;
    snprintf(s_urdf, sizeof s_urdf, "robots.0.urdf=%s", urdf);
    snprintf(s_pos, sizeof s_pos, "robots.0.position=[0, 0, %.9g]", CORPUS_CLEARANCE - zmin);
    snprintf(s_ctl, sizeof s_ctl, "robots.0.controller={type: %s, kp: %g, kd: %g}",
             pd ? "pd" : "none", CORPUS_PD_KP, CORPUS_PD_KD);
    const char *sets[4] = {s_urdf, s_pos, pd ? s_ctl : "robots.0.controller={type: none}", extra};
    fr_scene *sc;
    fr_diag d;
    if ((err = fr_scene_load(scene, sets, extra ? 4 : 3, &sc, &d))) {
        fr_diag_print(&d, stderr);
        return err;
    }
    fr_world *w = fr_scene_world(sc);
    const fr_tree *t = fr_world_robot_tree(w, 0);
    fr_tree_data *td = fr_world_robot_data(w, 0);
    out->links = fr_tree_nlinks(t);
    for (int i = 0; i < out->links; i++) out->mimic += fr_tree_link_def(t, i)->mimic_joint != NULL;
    out->dof = fr_tree_nv(t);
    double dt = fr_world_get_def(w)->dt;
    long steps = lround(seconds / dt), rest_from = steps - lround(1.0 / dt), k;
    long end_from = steps - lround(0.1 / dt);
    double cpu = 0, mass;
    fr_vec3 com0 = fr_tree_com(t, td, &mass);
    double e0 = fr_tree_kinetic_energy(t, td) + fr_tree_potential_energy(t, td);
    out->energy_scale = mass * fr_v3_norm(td->gravity) * com0.z;
    for (k = 0; k < steps; k++) {
        double c0 = cpu_now();
        out->err = fr_world_step(w);
        cpu += cpu_now() - c0;
        if (out->err) {
            out->fault = *fr_world_get_fault(w);
            break;
        }
        double gain = fr_tree_kinetic_energy(t, td) + fr_tree_potential_energy(t, td) - e0;
        if (!(gain <= out->energy_gain)) out->energy_gain = gain;
        double pen = fr_world_max_penetration(w);
        if (pen > out->pen_max) {
            out->pen_max = pen;
            out->pen_max_at = (double)(k + 1) * dt;
        }
        if (k >= rest_from && pen > out->pen_rest) out->pen_rest = pen;
        int nc = fr_world_contact_count(w);
        if (nc > out->contacts_max) out->contacts_max = nc;
        for (int i = 0; i < fr_tree_nlinks(t); i++) {
            const fr_link_def *ld = fr_tree_link_def(t, i);
            if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) continue;
            double v = fabs(td->qd[fr_tree_link_v_index(t, i)]);
            if (!(v <= out->max_joint_speed)) out->max_joint_speed = v;
            if (k >= end_from && !(v <= out->end_speed)) out->end_speed = v;
            if (!ld->mimic_joint) continue;
            double q = td->q[fr_tree_link_q_index(t, i)];
            double qj = td->q[fr_tree_link_q_index(t, fr_tree_joint_find(t, ld->mimic_joint))];
            double e = fabs(q - (ld->mimic_multiplier * qj + ld->mimic_offset));
            if (!(e <= out->mimic_err)) out->mimic_err = e;
            double travel = fabs(q - ld->q0);
            if (travel > out->mimic_travel) out->mimic_travel = travel;
        }
    }
    for (int i = 0; i < fr_tree_nlinks(t) && k == steps; i++) {
        fr_vec3 v;
        fr_body_get_velocity(w, fr_world_robot_link_body(w, 0, i), &v, NULL);
        if (!(fr_v3_norm(v) <= out->end_speed)) out->end_speed = fr_v3_norm(v);
    }
    out->end_contacts = fr_world_contact_count(w);
    out->seconds = (double)k * dt;
    out->cpu_per_step = k > 0 ? cpu / (double)k : 0;
    out->velocity_limited = td->velocity_limited;
    fr_world_solver_stats ss;
    fr_world_solver_stats_get(w, &ss);
    out->tree_steps = k > 0 ? (double)ss.tree_steps / (double)k : 0;
    out->unconverged = ss.unconverged;
    fr_scene_destroy(sc);
    return FR_OK;
}
