/*
 * fureru math: 3-vectors, quaternions (w, x, y, z), 3x3 matrices, poses, and Featherstone's
 * spatial algebra (6-D motion and force vectors, Plücker transforms, spatial inertia).
 *
 * Conventions
 * - Right-handed, z up, SI units.
 * - fr_mat3 is row-major: m[row][col].
 * - Spatial vectors are stored (angular; linear) as in Featherstone, "Rigid Body Dynamics
 *   Algorithms" (RBDA): a motion vector is (ω; v_O), a force vector is (n_O; f), both referred
 *   to the origin O of the frame they are expressed in.
 * - fr_xform X = B_X_A maps motion vectors from frame A to frame B: with E the rotation taking
 *   A-coordinates to B-coordinates (E = R_BA^T... see fr_xform) and r the position of B's origin
 *   expressed in A, X = [E 0; -E r× E], and X* = [E -E r×; 0 E] for force vectors.
 * Hot functions are static inline; the rest are in src/math.
 */
#ifndef FURERU_MATH_H
#define FURERU_MATH_H

#include <math.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_vec3 {
    double x, y, z;
} fr_vec3;

typedef struct fr_quat {
    double w, x, y, z;
} fr_quat;

typedef struct fr_mat3 {
    double m[3][3];
} fr_mat3;

/* Rigid transform: a point p in the local frame is at R(q) p + p_world. */
typedef struct fr_pose {
    fr_vec3 p; /* position of the local origin, m */
    fr_quat q; /* orientation, unit quaternion */
} fr_pose;

/* Spatial motion (ω; v) or force (n; f) vector. */
typedef struct fr_svec {
    fr_vec3 ang;
    fr_vec3 lin;
} fr_svec;

/* Plücker transform B_X_A: E rotates A-coordinates into B-coordinates, r = origin of B in A. */
typedef struct fr_xform {
    fr_mat3 E;
    fr_vec3 r;
} fr_xform;

/* Rigid-body spatial inertia about a frame's origin: [Ibar h×; -h× m1]... in compact form:
 * m = mass (kg), h = m·c (kg·m, c = centre of mass), Ibar = rotational inertia about the origin
 * (kg·m²). I·(ω; v) = (Ibar ω + h × v; m v − h × ω). */
typedef struct fr_rbi {
    double m;
    fr_vec3 h;
    fr_mat3 Ibar;
} fr_rbi;

/* Dense 6x6 (articulated-body inertia and the like), row-major, spatial order (ang; lin). */
typedef struct fr_mat6 {
    double m[6][6];
} fr_mat6;

/* ---------------------------------------------------------------- vec3 */

static inline fr_vec3 fr_v3(double x, double y, double z)
{
    return (fr_vec3){x, y, z};
}
static inline fr_vec3 fr_v3_zero(void)
{
    return (fr_vec3){0.0, 0.0, 0.0};
}
static inline fr_vec3 fr_v3_add(fr_vec3 a, fr_vec3 b)
{
    return fr_v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline fr_vec3 fr_v3_sub(fr_vec3 a, fr_vec3 b)
{
    return fr_v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline fr_vec3 fr_v3_neg(fr_vec3 a)
{
    return fr_v3(-a.x, -a.y, -a.z);
}
static inline fr_vec3 fr_v3_scale(fr_vec3 a, double s)
{
    return fr_v3(a.x * s, a.y * s, a.z * s);
}
/* a + s·b */
static inline fr_vec3 fr_v3_mad(fr_vec3 a, double s, fr_vec3 b)
{
    return fr_v3(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z);
}
static inline fr_vec3 fr_v3_mul(fr_vec3 a, fr_vec3 b)
{
    return fr_v3(a.x * b.x, a.y * b.y, a.z * b.z);
}
static inline double fr_v3_dot(fr_vec3 a, fr_vec3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline fr_vec3 fr_v3_cross(fr_vec3 a, fr_vec3 b)
{
    return fr_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double fr_v3_norm2(fr_vec3 a)
{
    return fr_v3_dot(a, a);
}
static inline double fr_v3_norm(fr_vec3 a)
{
    return sqrt(fr_v3_dot(a, a));
}
static inline double fr_v3_dist(fr_vec3 a, fr_vec3 b)
{
    return fr_v3_norm(fr_v3_sub(a, b));
}
/* Unit vector along a; a itself when |a| == 0. */
static inline fr_vec3 fr_v3_normalize(fr_vec3 a)
{
    double n = fr_v3_norm(a);
    return n > 0.0 ? fr_v3_scale(a, 1.0 / n) : a;
}
static inline fr_vec3 fr_v3_lerp(fr_vec3 a, fr_vec3 b, double t)
{
    return fr_v3_add(a, fr_v3_scale(fr_v3_sub(b, a), t));
}
static inline fr_vec3 fr_v3_min(fr_vec3 a, fr_vec3 b)
{
    return fr_v3(fmin(a.x, b.x), fmin(a.y, b.y), fmin(a.z, b.z));
}
static inline fr_vec3 fr_v3_max(fr_vec3 a, fr_vec3 b)
{
    return fr_v3(fmax(a.x, b.x), fmax(a.y, b.y), fmax(a.z, b.z));
}
static inline fr_vec3 fr_v3_abs(fr_vec3 a)
{
    return fr_v3(fabs(a.x), fabs(a.y), fabs(a.z));
}
static inline double fr_v3_get(fr_vec3 a, int i)
{
    return i == 0 ? a.x : (i == 1 ? a.y : a.z);
}
static inline bool fr_v3_isfinite(fr_vec3 a)
{
    return isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}
/* Some unit vector perpendicular to the unit vector n. */
static inline fr_vec3 fr_v3_perp(fr_vec3 n)
{
    fr_vec3 t = fabs(n.x) < 0.57735 ? fr_v3(1, 0, 0)
                                    : (fabs(n.y) < 0.57735 ? fr_v3(0, 1, 0) : fr_v3(0, 0, 1));
    return fr_v3_normalize(fr_v3_cross(n, t));
}

/* ---------------------------------------------------------------- mat3 */

static inline fr_mat3 fr_m3_identity(void)
{
    return (fr_mat3){{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
}
static inline fr_mat3 fr_m3_zero(void)
{
    return (fr_mat3){{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
}
static inline fr_mat3 fr_m3_diag(fr_vec3 d)
{
    return (fr_mat3){{{d.x, 0, 0}, {0, d.y, 0}, {0, 0, d.z}}};
}
/* The cross-product matrix: skew(a)·b == a × b. */
static inline fr_mat3 fr_m3_skew(fr_vec3 a)
{
    return (fr_mat3){{{0, -a.z, a.y}, {a.z, 0, -a.x}, {-a.y, a.x, 0}}};
}
static inline fr_mat3 fr_m3_cols(fr_vec3 c0, fr_vec3 c1, fr_vec3 c2)
{
    return (fr_mat3){{{c0.x, c1.x, c2.x}, {c0.y, c1.y, c2.y}, {c0.z, c1.z, c2.z}}};
}
static inline fr_vec3 fr_m3_col(const fr_mat3 *a, int j)
{
    return fr_v3(a->m[0][j], a->m[1][j], a->m[2][j]);
}
static inline fr_vec3 fr_m3_row(const fr_mat3 *a, int i)
{
    return fr_v3(a->m[i][0], a->m[i][1], a->m[i][2]);
}
static inline fr_vec3 fr_m3_mulv(fr_mat3 a, fr_vec3 v)
{
    return fr_v3(a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
                 a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
                 a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z);
}
/* aᵀ v */
static inline fr_vec3 fr_m3_tmulv(fr_mat3 a, fr_vec3 v)
{
    return fr_v3(a.m[0][0] * v.x + a.m[1][0] * v.y + a.m[2][0] * v.z,
                 a.m[0][1] * v.x + a.m[1][1] * v.y + a.m[2][1] * v.z,
                 a.m[0][2] * v.x + a.m[1][2] * v.y + a.m[2][2] * v.z);
}
static inline fr_mat3 fr_m3_mul(fr_mat3 a, fr_mat3 b)
{
    fr_mat3 c;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return c;
}
static inline fr_mat3 fr_m3_transpose(fr_mat3 a)
{
    fr_mat3 t;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) t.m[i][j] = a.m[j][i];
    return t;
}
/* aᵀ b */
static inline fr_mat3 fr_m3_tmul(fr_mat3 a, fr_mat3 b)
{
    return fr_m3_mul(fr_m3_transpose(a), b);
}
/* a bᵀ */
static inline fr_mat3 fr_m3_mult(fr_mat3 a, fr_mat3 b)
{
    return fr_m3_mul(a, fr_m3_transpose(b));
}
static inline fr_mat3 fr_m3_add(fr_mat3 a, fr_mat3 b)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] += b.m[i][j];
    return a;
}
static inline fr_mat3 fr_m3_sub(fr_mat3 a, fr_mat3 b)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] -= b.m[i][j];
    return a;
}
static inline fr_mat3 fr_m3_scale(fr_mat3 a, double s)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] *= s;
    return a;
}
/* a bᵀ (outer product) */
static inline fr_mat3 fr_m3_outer(fr_vec3 a, fr_vec3 b)
{
    return (fr_mat3){{{a.x * b.x, a.x * b.y, a.x * b.z},
                      {a.y * b.x, a.y * b.y, a.y * b.z},
                      {a.z * b.x, a.z * b.y, a.z * b.z}}};
}
static inline double fr_m3_det(fr_mat3 a)
{
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
           a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
           a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}
static inline double fr_m3_trace(fr_mat3 a)
{
    return a.m[0][0] + a.m[1][1] + a.m[2][2];
}
/* R a Rᵀ (rotate a tensor such as an inertia) */
static inline fr_mat3 fr_m3_rotate(fr_mat3 R, fr_mat3 a)
{
    return fr_m3_mult(fr_m3_mul(R, a), R);
}

/* Inverse; returns false (and leaves *out untouched) when |det| <= tiny relative to the norm. */
bool fr_m3_inverse(fr_mat3 a, fr_mat3 *out);
/* Solve a x = b for symmetric positive-definite a (Cholesky); false if a is not SPD. */
bool fr_m3_solve_spd(fr_mat3 a, fr_vec3 b, fr_vec3 *x);
/* Symmetric eigen-decomposition a = V diag(w) Vᵀ (cyclic Jacobi), w ascending, V a rotation. */
void fr_m3_eigen_sym(fr_mat3 a, fr_vec3 *w, fr_mat3 *V);

/* ---------------------------------------------------------------- quaternion */

static inline fr_quat fr_q(double w, double x, double y, double z)
{
    return (fr_quat){w, x, y, z};
}
static inline fr_quat fr_q_identity(void)
{
    return (fr_quat){1.0, 0.0, 0.0, 0.0};
}
static inline fr_quat fr_q_mul(fr_quat a, fr_quat b)
{
    return fr_q(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}
static inline fr_quat fr_q_conj(fr_quat a)
{
    return fr_q(a.w, -a.x, -a.y, -a.z);
}
static inline double fr_q_norm(fr_quat a)
{
    return sqrt(a.w * a.w + a.x * a.x + a.y * a.y + a.z * a.z);
}
static inline fr_quat fr_q_normalize(fr_quat a)
{
    double n = fr_q_norm(a);
    if (!(n > 0.0)) return fr_q_identity();
    double s = 1.0 / n;
    return fr_q(a.w * s, a.x * s, a.y * s, a.z * s);
}
static inline bool fr_q_isfinite(fr_quat a)
{
    return isfinite(a.w) && isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}
/* Rotate v by the unit quaternion q: q v q*. */
static inline fr_vec3 fr_q_rotate(fr_quat q, fr_vec3 v)
{
    fr_vec3 u = fr_v3(q.x, q.y, q.z);
    fr_vec3 t = fr_v3_scale(fr_v3_cross(u, v), 2.0);
    return fr_v3_add(fr_v3_add(v, fr_v3_scale(t, q.w)), fr_v3_cross(u, t));
}
/* Rotate v by q⁻¹. */
static inline fr_vec3 fr_q_unrotate(fr_quat q, fr_vec3 v)
{
    return fr_q_rotate(fr_q_conj(q), v);
}
/* Rotation of angle (rad) about a unit axis. */
static inline fr_quat fr_q_axis_angle(fr_vec3 axis, double angle)
{
    double s = sin(0.5 * angle);
    return fr_q(cos(0.5 * angle), axis.x * s, axis.y * s, axis.z * s);
}
/* Exponential map: the rotation by |r| radians about r/|r| (r a rotation vector). Accurate for
 * tiny |r| (series), so it is safe to use as the integrator's update. */
static inline fr_quat fr_q_exp(fr_vec3 r)
{
    double th = fr_v3_norm(r);
    double h = 0.5 * th;
    double c = cos(h), s; /* s = sin(h)/th */
    if (th < 1e-4)
        s = 0.5 - th * th / 48.0; /* sin(h)/th = 1/2 - th²/48 + O(th⁴) */
    else
        s = sin(h) / th;
    return fr_q(c, r.x * s, r.y * s, r.z * s);
}
/* Logarithm: the rotation vector of a unit quaternion, angle in [0, π]. */
fr_vec3 fr_q_log(fr_quat q);
/* Rotation matrix of a unit quaternion. */
fr_mat3 fr_q_to_m3(fr_quat q);
/* Unit quaternion of a rotation matrix (Shepperd's method). */
fr_quat fr_m3_to_q(fr_mat3 R);
/* Quaternion from roll-pitch-yaw (rad): R = Rz(yaw) Ry(pitch) Rx(roll), as URDF. */
fr_quat fr_q_from_rpy(double roll, double pitch, double yaw);
/* Smallest angle (rad) between two orientations. */
double fr_q_angle_between(fr_quat a, fr_quat b);

/* ---------------------------------------------------------------- pose */

static inline fr_pose fr_pose_identity(void)
{
    return (fr_pose){fr_v3_zero(), fr_q_identity()};
}
/* World coordinates of a local point. */
static inline fr_vec3 fr_pose_apply(fr_pose T, fr_vec3 p)
{
    return fr_v3_add(fr_q_rotate(T.q, p), T.p);
}
/* Local coordinates of a world point. */
static inline fr_vec3 fr_pose_apply_inv(fr_pose T, fr_vec3 p)
{
    return fr_q_unrotate(T.q, fr_v3_sub(p, T.p));
}
/* a ∘ b: first b, then a (b is expressed in a's frame). */
static inline fr_pose fr_pose_mul(fr_pose a, fr_pose b)
{
    return (fr_pose){fr_pose_apply(a, b.p), fr_q_mul(a.q, b.q)};
}
static inline fr_pose fr_pose_inverse(fr_pose a)
{
    fr_quat qi = fr_q_conj(a.q);
    return (fr_pose){fr_v3_neg(fr_q_rotate(qi, a.p)), qi};
}

/* ---------------------------------------------------------------- spatial vectors */

static inline fr_svec fr_sv(fr_vec3 ang, fr_vec3 lin)
{
    return (fr_svec){ang, lin};
}
static inline fr_svec fr_sv_zero(void)
{
    return (fr_svec){fr_v3_zero(), fr_v3_zero()};
}
static inline fr_svec fr_sv_add(fr_svec a, fr_svec b)
{
    return fr_sv(fr_v3_add(a.ang, b.ang), fr_v3_add(a.lin, b.lin));
}
static inline fr_svec fr_sv_sub(fr_svec a, fr_svec b)
{
    return fr_sv(fr_v3_sub(a.ang, b.ang), fr_v3_sub(a.lin, b.lin));
}
static inline fr_svec fr_sv_scale(fr_svec a, double s)
{
    return fr_sv(fr_v3_scale(a.ang, s), fr_v3_scale(a.lin, s));
}
static inline fr_svec fr_sv_mad(fr_svec a, double s, fr_svec b)
{
    return fr_sv(fr_v3_mad(a.ang, s, b.ang), fr_v3_mad(a.lin, s, b.lin));
}
static inline fr_svec fr_sv_neg(fr_svec a)
{
    return fr_sv(fr_v3_neg(a.ang), fr_v3_neg(a.lin));
}
/* Scalar product of a motion and a force vector (power). */
static inline double fr_sv_dot(fr_svec a, fr_svec b)
{
    return fr_v3_dot(a.ang, b.ang) + fr_v3_dot(a.lin, b.lin);
}
static inline double fr_sv_get(const fr_svec *a, int i)
{
    return i < 3 ? fr_v3_get(a->ang, i) : fr_v3_get(a->lin, i - 3);
}
static inline void fr_sv_set(fr_svec *a, int i, double s)
{
    fr_vec3 *v = i < 3 ? &a->ang : &a->lin;
    int k = i % 3;
    if (k == 0)
        v->x = s;
    else if (k == 1)
        v->y = s;
    else
        v->z = s;
}
/* Motion cross product v × m (RBDA crm). */
static inline fr_svec fr_sv_crossm(fr_svec v, fr_svec m)
{
    return fr_sv(fr_v3_cross(v.ang, m.ang),
                 fr_v3_add(fr_v3_cross(v.ang, m.lin), fr_v3_cross(v.lin, m.ang)));
}
/* Force cross product v ×* f (RBDA crf). */
static inline fr_svec fr_sv_crossf(fr_svec v, fr_svec f)
{
    return fr_sv(fr_v3_add(fr_v3_cross(v.ang, f.ang), fr_v3_cross(v.lin, f.lin)),
                 fr_v3_cross(v.ang, f.lin));
}

/* ---------------------------------------------------------------- Plücker transforms */

static inline fr_xform fr_xf_identity(void)
{
    return (fr_xform){fr_m3_identity(), fr_v3_zero()};
}
/* Frame B rotated by E (A→B coordinates) and displaced by r (B's origin in A coordinates). */
static inline fr_xform fr_xf(fr_mat3 E, fr_vec3 r)
{
    return (fr_xform){E, r};
}
/* Pure translation by r (B's origin at r in A). */
static inline fr_xform fr_xf_trans(fr_vec3 r)
{
    return fr_xf(fr_m3_identity(), r);
}
/* Pure rotation with E mapping A coordinates into B coordinates. */
static inline fr_xform fr_xf_rot(fr_mat3 E)
{
    return fr_xf(E, fr_v3_zero());
}
/* The transform from a parent frame A to a child frame B whose pose in A is T. */
static inline fr_xform fr_xf_from_pose(fr_pose T)
{
    return fr_xf(fr_m3_transpose(fr_q_to_m3(T.q)), T.p);
}
/* X m (motion). */
static inline fr_svec fr_xf_apply_m(fr_xform X, fr_svec m)
{
    return fr_sv(fr_m3_mulv(X.E, m.ang),
                 fr_m3_mulv(X.E, fr_v3_sub(m.lin, fr_v3_cross(X.r, m.ang))));
}
/* X* f (force). */
static inline fr_svec fr_xf_apply_f(fr_xform X, fr_svec f)
{
    return fr_sv(fr_m3_mulv(X.E, fr_v3_sub(f.ang, fr_v3_cross(X.r, f.lin))),
                 fr_m3_mulv(X.E, f.lin));
}
/* X⁻¹ m (motion from B back to A). */
static inline fr_svec fr_xf_inv_apply_m(fr_xform X, fr_svec m)
{
    fr_vec3 w = fr_m3_tmulv(X.E, m.ang);
    return fr_sv(w, fr_v3_add(fr_m3_tmulv(X.E, m.lin), fr_v3_cross(X.r, w)));
}
/* Xᵀ f = (X⁻¹)* f (force from B back to A). */
static inline fr_svec fr_xf_inv_apply_f(fr_xform X, fr_svec f)
{
    fr_vec3 fl = fr_m3_tmulv(X.E, f.lin);
    return fr_sv(fr_v3_add(fr_m3_tmulv(X.E, f.ang), fr_v3_cross(X.r, fl)), fl);
}
/* C_X_A = (C_X_B)(B_X_A): a = C_X_B, b = B_X_A. */
static inline fr_xform fr_xf_mul(fr_xform a, fr_xform b)
{
    return fr_xf(fr_m3_mul(a.E, b.E), fr_v3_add(b.r, fr_m3_tmulv(b.E, a.r)));
}
static inline fr_xform fr_xf_inverse(fr_xform X)
{
    return fr_xf(fr_m3_transpose(X.E), fr_v3_neg(fr_m3_mulv(X.E, X.r)));
}

/* ---------------------------------------------------------------- spatial inertia */

/* Body of mass m (kg), centre of mass c, rotational inertia Ic about c (kg·m²). */
static inline fr_rbi fr_rbi_make(double m, fr_vec3 c, fr_mat3 Ic)
{
    fr_mat3 cx = fr_m3_skew(c);
    /* Ibar = Ic + m cx cxᵀ (parallel axis) */
    return (fr_rbi){m, fr_v3_scale(c, m), fr_m3_add(Ic, fr_m3_scale(fr_m3_mult(cx, cx), m))};
}
static inline fr_rbi fr_rbi_add(fr_rbi a, fr_rbi b)
{
    return (fr_rbi){a.m + b.m, fr_v3_add(a.h, b.h), fr_m3_add(a.Ibar, b.Ibar)};
}
/* I v (motion → momentum). */
static inline fr_svec fr_rbi_mulv(fr_rbi I, fr_svec v)
{
    return fr_sv(fr_v3_add(fr_m3_mulv(I.Ibar, v.ang), fr_v3_cross(I.h, v.lin)),
                 fr_v3_sub(fr_v3_scale(v.lin, I.m), fr_v3_cross(I.h, v.ang)));
}
/* Inertia of frame A expressed in frame B given I in A and X = B_X_A: X* I X⁻¹. */
fr_rbi fr_rbi_transform(fr_xform X, fr_rbi I);
/* Inertia in B expressed back in A: Xᵀ I_B X (X = B_X_A), e.g. a child's inertia into its parent.
 */
fr_rbi fr_rbi_transform_inv(fr_xform X, fr_rbi I);

/* ---------------------------------------------------------------- 6x6 */

fr_mat6 fr_m6_zero(void);
fr_mat6 fr_m6_from_rbi(fr_rbi I);
fr_svec fr_m6_mulv(const fr_mat6 *a, fr_svec v);
void fr_m6_add(fr_mat6 *a, const fr_mat6 *b);
/* Xᵀ a X with X = B_X_A: an inertia-like 6x6 in B expressed in A. */
void fr_m6_transform_inv(fr_xform X, const fr_mat6 *a, fr_mat6 *out);
/* X* a X⁻¹ with X = B_X_A: an inertia-like 6x6 in A expressed in B. */
void fr_m6_transform(fr_xform X, const fr_mat6 *a, fr_mat6 *out);
/* a -= u uᵀ / d  (rank-one update used by ABA) */
void fr_m6_sub_outer(fr_mat6 *a, fr_svec u, double inv_d);

/* ---------------------------------------------------------------- small dense linear algebra */

/* In-place Cholesky of an n×n SPD matrix (row-major, lower factor left in a); false if not SPD. */
bool fr_chol_factor(double *a, int n);
/* Solve with a factor from fr_chol_factor; b is overwritten by x. */
void fr_chol_solve(const double *L, int n, double *b);
/* Solve a x = b by Gaussian elimination with partial pivoting (a, b overwritten); false if
 * singular. */
bool fr_lu_solve(double *a, int n, double *b);

/* Relative difference |a - b| / max(|a|, |b|, floor), for tests and checks. */
static inline double fr_reldiff(double a, double b, double floor)
{
    double s = fmax(fmax(fabs(a), fabs(b)), floor);
    return fabs(a - b) / s;
}

#ifdef __cplusplus
}
#endif
#endif
