/* SPIDAR kinematics and unit conversions (pure functions). */
#include <math.h>
#include <string.h>

#include "fureru/base.h"
#include "spidar_internal.h"

void fr_spidar_kinematics(const fr_spidar_config *cfg, fr_pose pose, fr_spidar_kin *out)
{
    int n = cfg->n_strings;
    fr_quat q = n == 4 ? cfg->home.q : pose.q;
    out->n = n;
    for (int i = 0; i < n; i++) {
        fr_vec3 rg = fr_q_rotate(q, cfg->motor[i].attach);
        fr_vec3 d = fr_v3_sub(cfg->motor[i].position, fr_v3_add(rg, pose.p));
        double l = fr_v3_norm(d);
        fr_vec3 u = l > 0 ? fr_v3_scale(d, 1.0 / l) : fr_v3_zero();
        out->length[i] = l;
        out->u[i] = u;
        out->m[i] = fr_v3_cross(rg, u);
    }
}

void fr_spidar_counts_to_lengths(const fr_spidar_config *cfg, const fr_spidar_calib *cal,
                                 const int64_t *counts, double *lengths)
{
    for (int i = 0; i < cfg->n_strings; i++)
        lengths[i] = (double)cfg->motor[i].count_sign * cfg->length_per_count *
                     ((double)counts[i] - cal->count_offset[i]);
}

void fr_spidar_calibrate_counts(const fr_spidar_config *cfg, const int64_t *counts, fr_pose pose,
                                fr_spidar_calib *cal)
{
    fr_spidar_kin k;
    fr_spidar_kinematics(cfg, pose, &k);
    memset(cal, 0, sizeof *cal);
    for (int i = 0; i < cfg->n_strings; i++)
        cal->count_offset[i] = (double)counts[i] - (double)cfg->motor[i].count_sign * k.length[i] /
                                                       cfg->length_per_count;
}

int fr_spidar_position_closed_form(const fr_spidar_config *cfg, const double *l, fr_vec3 *pos)
{
    if (cfg->n_strings != 4) return FR_ERR_UNSUPPORTED;
    fr_vec3 p[4];
    for (int i = 0; i < 4; i++) {
        if (!isfinite(l[i])) return FR_ERR_NUMERIC;
        p[i] = fr_v3_sub(cfg->motor[i].position, fr_q_rotate(cfg->home.q, cfg->motor[i].attach));
    }
    fr_mat3 B;
    double rhs[3];
    for (int i = 0; i < 3; i++) {
        fr_vec3 d = fr_v3_scale(fr_v3_sub(p[i + 1], p[i]), 2.0);
        B.m[i][0] = d.x, B.m[i][1] = d.y, B.m[i][2] = d.z;
        rhs[i] = l[i] * l[i] - l[i + 1] * l[i + 1] + fr_v3_norm2(p[i + 1]) - fr_v3_norm2(p[i]);
    }
    fr_mat3 Bi;
    if (!fr_m3_inverse(B, &Bi)) return FR_ERR_NUMERIC;
    fr_vec3 x = fr_m3_mulv(Bi, fr_v3(rhs[0], rhs[1], rhs[2]));
    if (!fr_v3_isfinite(x)) return FR_ERR_NUMERIC;
    *pos = x;
    return FR_OK;
}

int fr_spidar_pose_solve(const fr_spidar_config *cfg, const double *lengths, fr_pose guess,
                         int max_iter, double tol, fr_pose *out, int *iters, double *residual)
{
    int n = cfg->n_strings;
    fr_pose x = guess;
    x.q = fr_q_normalize(x.q);
    int it = 0;
    fr_spidar_kin k;
    for (; it < max_iter; it++) {
        fr_spidar_kinematics(cfg, x, &k);
        /* Normal equations (AᵀA + σ diag(AᵀA)) δ = Aᵀ (l_calc − l_meas), A rows [uᵀ mᵀ]:
         * l decreases by u·δx + m·δθ when the grip moves by δx and turns by δθ. */
        double N[36] = {0}, b[6] = {0};
        for (int i = 0; i < n; i++) {
            double r[6] = {k.u[i].x, k.u[i].y, k.u[i].z, k.m[i].x, k.m[i].y, k.m[i].z};
            double e = k.length[i] - lengths[i];
            for (int a = 0; a < 6; a++) {
                b[a] += r[a] * e;
                for (int c = 0; c < 6; c++) N[a * 6 + c] += r[a] * r[c];
            }
        }
        for (int a = 0; a < 6; a++) N[a * 6 + a] *= 1.0 + cfg->gn_damping;
        if (!fr_chol_factor(N, 6)) return FR_ERR_NUMERIC;
        fr_chol_solve(N, 6, b);
        fr_vec3 dx = fr_v3(b[0], b[1], b[2]), dth = fr_v3(b[3], b[4], b[5]);
        if (!fr_v3_isfinite(dx) || !fr_v3_isfinite(dth)) return FR_ERR_NUMERIC;
        double sx = fr_v3_norm(dx), sr = fr_v3_norm(dth);
        if (sx > cfg->gn_max_step) dx = fr_v3_scale(dx, cfg->gn_max_step / sx);
        if (sr > cfg->gn_max_rot) dth = fr_v3_scale(dth, cfg->gn_max_rot / sr);
        x.p = fr_v3_add(x.p, dx);
        x.q = fr_q_normalize(fr_q_mul(fr_q_exp(dth), x.q));
        if (sx < tol && sr < tol) {
            it++;
            break;
        }
    }
    if (!fr_v3_isfinite(x.p) || !fr_q_isfinite(x.q)) return FR_ERR_NUMERIC;
    if (iters) *iters = it;
    if (residual) {
        fr_spidar_kinematics(cfg, x, &k);
        double s = 0;
        for (int i = 0; i < n; i++) s += (k.length[i] - lengths[i]) * (k.length[i] - lengths[i]);
        *residual = sqrt(s / n);
    }
    *out = x;
    return FR_OK;
}

void fr_spidar_tension_to_dac(const fr_spidar_config *cfg, const double *t,
                              int16_t dac[FR_SPIDAR_CHANNELS])
{
    memset(dac, 0, sizeof(int16_t) * FR_SPIDAR_CHANNELS);
    double lim = (double)cfg->dac_limit;
    for (int i = 0; i < cfg->n_strings; i++) {
        /* A tension outside the box (or NaN) never reaches a motor. */
        double ti = isfinite(t[i]) ? fmin(fmax(t[i], cfg->tension_min), cfg->tension_max)
                                   : cfg->tension_min;
        double v = (double)cfg->motor[i].volt_sign * cfg->volts_per_newton * ti;
        double d = nearbyint(v * cfg->dac_per_volt);
        if (d < -lim) d = -lim;
        if (d > lim) d = lim;
        dac[cfg->motor[i].channel] = (int16_t)d;
    }
}

void fr_spidar_dac_to_tension(const fr_spidar_config *cfg, const int16_t dac[FR_SPIDAR_CHANNELS],
                              double *t)
{
    for (int i = 0; i < cfg->n_strings; i++)
        t[i] = (double)dac[cfg->motor[i].channel] / cfg->dac_per_volt /
               (cfg->volts_per_newton * (double)cfg->motor[i].volt_sign);
}
