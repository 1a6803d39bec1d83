/* egain sx sy sz yaw dt mu tan T (STOP=a: until the block has turned a rad): a block on the slope
 * scene (tan θ given, μ_s = μ_k = mu), run T s from the touching placement: the largest one-step
 * rise of energy less work, when, and the block's tilt then (VERBOSE=1: every step's rise above
 * 1e-9 J) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "fureru/scene.h"
#include "fureru/world.h"
#include "fureru/math.h"
#include "energy_trace.h"
#include "slope_case.h"
int main(int argc, char **argv)
{
    if (argc < 9) return 2;
    double sx = atof(argv[1]), sy = atof(argv[2]), sz = atof(argv[3]), yaw = atof(argv[4]);
    double dt = atof(argv[5]), mu = atof(argv[6]), tn = atof(argv[7]), T = atof(argv[8]);
    const double deg = atan(tn) * 180 / M_PI;
    fr_scene *s = slope_case_load(sx, sy, sz, yaw, 1, dt, deg, mu - tn, 0);
    if (!s) return 1;
    fr_world *w = fr_scene_world(s);
    fr_body_id b;
    fr_world_find_body(w, "block", &b);
    fr_pose p0, p;
    fr_body_get_pose(w, b, &p0);
    fr_world_energy e0, e1;
    fr_world_energy_get(w, &e0);
    double worst = 0, wt = 0, wtilt = 0;
    fr_world_solver_stats st0;
    fr_world_solver_stats_get(w, &st0);
    for (long i = 0; i < (long)(T / dt); i++) {
        if (fr_world_step(w) < 0) {
            fprintf(stderr, "step %ld failed\n", i);
            break;
        }
        fr_world_energy_get(w, &e1);
        double gain = (e1.total - e1.work) - (e0.total - e0.work);
        fr_body_get_pose(w, b, &p);
        double tilt = fr_q_angle_between(p.q, p0.q);
        if (getenv("STOP") && tilt > atof(getenv("STOP"))) break;
        if (getenv("VERBOSE") && atof(getenv("VERBOSE")) > 1)
            printf("t %.4f kin %.6e pot %.6e con %.6e work %.3e gain %.3e tilt %.5f\n",
                   fr_world_time(w), e1.kinetic, e1.potential, e1.contact, e1.work, gain, tilt);
        fr_world_solver_stats st;
        fr_world_solver_stats_get(w, &st);
        if (getenv("VERBOSE") && atof(getenv("VERBOSE")) <= 1 && gain > 1e-9)
            printf("t %.4f gain %.3e tilt %.4f contact %.3e late %ld %.3e paid %.3e held %.3e\n",
                   fr_world_time(w), gain, tilt, e1.contact, st.late - st0.late,
                   st.late_energy - st0.late_energy, st.late_paid - st0.late_paid,
                   st.late_held - st0.late_held);
        st0 = st;
        if (getenv("EVERY") && i % atoi(getenv("EVERY")) == 0) {
            fr_vec3 vel, om;
            fr_body_get_velocity(w, b, &vel, &om);
            printf("t %.4f tilt %.5f om %+.4e %+.4e %+.4e v %+.3e %+.3e %+.3e\n", fr_world_time(w),
                   tilt, om.x, om.y, om.z, vel.x, vel.y, vel.z);
        }
        if (getenv("FROM") && i >= atol(getenv("FROM")) && i <= atol(getenv("TO")))
            energy_trace_step(w, i, &e0, &e1);
        if (gain > worst) worst = gain, wt = fr_world_time(w), wtilt = tilt;
        e0 = e1;
    }
    printf("worst gain %.3e J (%.3e of m g h) at t %.4f tilt %.4f\n", worst, worst / (9.81 * sz),
           wt, wtilt);
    return 0;
}
