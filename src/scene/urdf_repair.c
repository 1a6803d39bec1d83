/* URDF links and joints → the robot: joints connected to links (an undeclared "world" parent is
 * the world frame), the tree ordered from its root, mimic joints and transmissions resolved,
 * links on fixed joints merged into their parents, and what cannot move for lack of mass given a
 * minimum. Also the inertia balancing (the nearest physical tensor). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_internal.h"

/* ---------------------------------------------------------------- inertia */

/* Projection of principal moments onto the cone λi + λj >= λk (all three): the nearest point
 * lies on a face of the cone, so it is the nearest feasible one among the projections onto the
 * subspaces where some of the constraints hold with equality. */
static fr_vec3 project_moments(fr_vec3 lam)
{
    const double l[3] = {lam.x, lam.y, lam.z};
    /* a_k·λ >= 0 with a_k = (1, 1, 1) − 2 e_k */
    double a[3][3];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) a[k][i] = i == k ? -1.0 : 1.0;
    double best[3] = {0, 0, 0}, best_d = INFINITY;
    double scale = fabs(l[0]) + fabs(l[1]) + fabs(l[2]);
    for (int mask = 0; mask < 8; mask++) {
        double x[3] = {l[0], l[1], l[2]};
        int idx[3], m = 0;
        for (int k = 0; k < 3; k++)
            if (mask & (1 << k)) idx[m++] = k;
        if (m == 3) {
            x[0] = x[1] = x[2] = 0; /* the apex */
        } else if (m > 0) {
            /* x − Aᵀ (A Aᵀ)⁻¹ A x, with a_i·a_i = 3 and a_i·a_j = −1 */
            double r[2];
            for (int i = 0; i < m; i++)
                r[i] = a[idx[i]][0] * l[0] + a[idx[i]][1] * l[1] + a[idx[i]][2] * l[2];
            double y[2];
            if (m == 1) {
                y[0] = r[0] / 3.0;
            } else {
                y[0] = (3.0 * r[0] + r[1]) / 8.0;
                y[1] = (r[0] + 3.0 * r[1]) / 8.0;
            }
            for (int i = 0; i < m; i++)
                for (int c = 0; c < 3; c++) x[c] -= a[idx[i]][c] * y[i];
        }
        bool feasible = true;
        for (int k = 0; k < 3; k++)
            if (a[k][0] * x[0] + a[k][1] * x[1] + a[k][2] * x[2] < -1e-14 * scale) feasible = false;
        if (!feasible) continue;
        double d = 0;
        for (int c = 0; c < 3; c++) d += (x[c] - l[c]) * (x[c] - l[c]);
        if (d < best_d) {
            best_d = d;
            memcpy(best, x, sizeof best);
        }
    }
    return fr_v3(best[0], best[1], best[2]);
}

bool fr_urdf_balance_inertia(fr_mat3 I, fr_mat3 *out)
{
    fr_mat3 S;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) S.m[i][j] = 0.5 * (I.m[i][j] + I.m[j][i]);
    fr_vec3 e;
    fr_mat3 V;
    fr_m3_eigen_sym(S, &e, &V);
    double tol = 1e-9 * (fabs(e.x) + fabs(e.y) + fabs(e.z)) + 1e-300;
    if (e.x >= -tol && e.x + e.y >= e.z - tol) {
        *out = I;
        return false;
    }
    fr_vec3 p = project_moments(e);
    *out = fr_m3_mul(fr_m3_mul(V, fr_m3_diag(p)), fr_m3_transpose(V));
    return true;
}

void fri_urdf_check_inertia(fri_urdf_parser *p, const xmlNode *n, fr_mat3 *I, double mass)
{
    fr_mat3 J;
    if (fr_urdf_balance_inertia(*I, &J)) {
        fr_vec3 e0, e1;
        fr_mat3 V;
        fr_m3_eigen_sym(*I, &e0, &V);
        fr_m3_eigen_sym(J, &e1, &V);
        fri_urdf_warn(p, n, NULL,
                      "principal moments %.6g, %.6g, %.6g are not physical (%s): replaced by the "
                      "nearest physical tensor, moments %.6g, %.6g, %.6g (same axes)",
                      e0.x, e0.y, e0.z,
                      e0.x < -1e-9 * (fabs(e0.x) + fabs(e0.y) + fabs(e0.z))
                          ? "a negative moment"
                          : "the triangle inequality I1 + I2 >= I3 fails",
                      e1.x, e1.y, e1.z);
        *I = J;
    }
    if (mass == 0 && fr_m3_trace(*I) > 0) {
        fri_urdf_warn(p, n, NULL,
                      "a link of mass 0 cannot have an inertia: the inertia is dropped");
        *I = fr_m3_zero();
    }
}

/* ---------------------------------------------------------------- raw records */

void fri_urdf_free_raw(fri_raw_link *rl, int nl, fri_raw_joint *rj, int nj, fri_raw_trans *tr,
                       int ntr)
{
    for (int i = 0; rl && i < nl; i++) {
        free((char *)rl[i].l.name);
        for (int k = 0; k < rl[i].l.ncollisions; k++) fri_urdf_free_collision(&rl[i].cols[k]);
        free(rl[i].cols);
        free(rl[i].col_mesh);
    }
    for (int i = 0; rj && i < nj; i++) {
        free((char *)rj[i].j.name);
        free(rj[i].parent_name);
        free(rj[i].child_name);
        free(rj[i].mimic_name);
    }
    for (int i = 0; tr && i < ntr; i++) {
        free(tr[i].joint);
        free(tr[i].actuator);
    }
    free(rl);
    free(rj);
    free(tr);
}

static int find_link(const fri_raw_link *rl, int nl, const char *name)
{
    for (int i = 0; i < nl; i++)
        if (rl[i].l.name && !strcmp(rl[i].l.name, name)) return i;
    return -1;
}

/* ---------------------------------------------------------------- connecting */

/* Joints → links. An undeclared "world" parent becomes the virtual link rl[*nl] (the world frame).
 * Joints that cannot be connected are reported and left out. */
static int connect(fri_urdf_parser *p, fri_raw_link *rl, int *nl, fri_raw_joint *rj, int nj)
{
    int n = *nl, failed = 0;
    bool warned_world = false;
    for (int q = 0; q < nj; q++) {
        fri_raw_joint *J = &rj[q];
        J->j.parent = J->j.child = -1;
        if (J->bad || !J->parent_name || !J->child_name || !J->j.name) {
            failed++;
            continue;
        }
        int pi = find_link(rl, *nl, J->parent_name);
        int ci = find_link(rl, *nl, J->child_name);
        if (pi < 0 && !strcmp(J->parent_name, "world") && n == *nl) {
            /* the world frame, used without being declared */
            memset(&rl[n], 0, sizeof rl[n]);
            rl[n].l.name = strdup("world");
            rl[n].parent_joint = -1;
            rl[n].tree_index = -1;
            if (rl[n].l.name) {
                (*nl)++;
                pi = n;
            }
        }
        if (pi == n && !warned_world && !strcmp(J->parent_name, "world")) {
            fri_urdf_warn(p, J->parent_node, "link",
                          "joint '%s': parent link 'world' is not declared: read as the world "
                          "frame",
                          J->j.name);
            warned_world = true;
        }
        if (pi < 0 && ci >= 0) rl[ci].orphan = true; /* one error, not a second root too */
        if (pi < 0) {
            fri_urdf_err(p, J->parent_node, "link", FR_ERR_NOTFOUND,
                         "joint '%s': parent link '%s' is not defined", J->j.name, J->parent_name);
        } else if (ci < 0) {
            fri_urdf_err(p, J->child_node, "link", FR_ERR_NOTFOUND,
                         "joint '%s': child link '%s' is not defined", J->j.name, J->child_name);
        } else if (pi == ci) {
            fri_urdf_err(p, J->child_node, "link", FR_ERR_PARSE,
                         "joint '%s' connects link '%s' to itself", J->j.name, J->child_name);
        } else if (!strcmp(J->child_name, "world")) {
            fri_urdf_err(p, J->child_node, "link", FR_ERR_PARSE,
                         "the 'world' link cannot be the child of a joint");
        } else if (rl[ci].parent_joint >= 0) {
            const fr_urdf_joint *o = &rj[rl[ci].parent_joint].j;
            fri_urdf_err(p, J->child_node, "link", FR_ERR_PARSE,
                         "link '%s' is already the child of joint '%s' (line %d): a link has one "
                         "parent joint (closed loops are not supported)",
                         J->child_name, o->name, o->line);
        } else {
            rl[ci].parent_joint = q;
            J->j.parent = pi; /* raw indices for now */
            J->j.child = ci;
            continue;
        }
        failed++;
    }
    return failed;
}

/* The root, checks on it, and the tree order (depth first, children in joint order). Returns the
 * number of links in order (the world excluded), or a negative error (reported). */
static int order_tree(fri_urdf_parser *p, xmlNode *root, fri_raw_link *rl, int nl,
                      fri_raw_joint *rj, int nj, int failed, int *order, bool *world_out)
{
    int rootl = -1;
    for (int i = 0; i < nl; i++) {
        if (rl[i].parent_joint >= 0 || !rl[i].l.name || rl[i].orphan) continue;
        /* with a joint that could not be connected (reported), a second root is its child */
        if (rootl >= 0 && !failed)
            fri_urdf_err(p, rl[i].node, "name", FR_ERR_PARSE,
                         "link '%s' has no parent joint, but '%s' (line %d) is already the root: "
                         "a robot has one root link",
                         rl[i].l.name, rl[rootl].l.name, rl[rootl].l.line);
        else
            rootl = i;
    }
    if (rootl < 0 && nl > 0) {
        /* every link has a parent: the joints form a cycle; name one joint on it */
        int q = -1;
        for (int i = 0; i < nl && q < 0; i++) q = rl[i].parent_joint;
        for (int steps = 0; q >= 0 && steps < nl; steps++) q = rl[rj[q].j.parent].parent_joint;
        return q >= 0 ? fri_urdf_err(p, rj[q].node, NULL, FR_ERR_PARSE,
                                     "no root link: joint '%s' closes a cycle (every link has a "
                                     "parent joint)",
                                     rj[q].j.name)
                      : FR_ERR_PARSE;
    }
    if (rootl < 0) return FR_ERR_PARSE;
    bool world = !strcmp(rl[rootl].l.name, "world");
    *world_out = world;
    if (world && (rl[rootl].l.mass != 0 || rl[rootl].l.ncollisions))
        fri_urdf_err(p, rl[rootl].node, NULL, FR_ERR_PARSE,
                     "the root link 'world' stands for the world frame: it cannot have an "
                     "<inertial> or <collision>");
    int *stack = calloc((size_t)nl + 1, sizeof *stack);
    if (!stack) return FR_ERR_NOMEM;
    int sp = 0, norder = 0;
    stack[sp++] = rootl;
    while (sp > 0) {
        int l = stack[--sp];
        if (!(world && l == rootl)) {
            rl[l].tree_index = norder;
            order[norder++] = l;
        }
        /* children in reverse joint order so that the first joint's child comes first */
        for (int q = nj - 1; q >= 0; q--)
            if (rj[q].j.parent == l && rj[q].j.child >= 0 && rl[rj[q].j.child].parent_joint == q)
                stack[sp++] = rj[q].j.child;
    }
    free(stack);
    for (int i = 0; i < nl; i++)
        if (i != rootl && rl[i].l.name && rl[i].tree_index < 0) {
            /* on a branch whose top was already reported (an orphan or a second root): nothing
             * new to say; on a cycle, the walk up never ends at a root */
            int a = i, steps = 0;
            while (rl[a].parent_joint >= 0 && !rl[a].orphan && steps++ <= nl)
                a = rj[rl[a].parent_joint].j.parent;
            if (steps <= nl) continue;
            int q = rl[i].parent_joint;
            return fri_urdf_err(p, q >= 0 ? rj[q].node : rl[i].node, NULL, FR_ERR_PARSE,
                                "link '%s' is not connected to the root '%s': joint '%s' is part "
                                "of a cycle",
                                rl[i].l.name, rl[rootl].l.name, q >= 0 ? rj[q].j.name : "?");
        }
    if (norder == 0)
        return fri_urdf_err(p, root, NULL, FR_ERR_PARSE, "the robot has no link besides 'world'");
    return norder;
}

/* ---------------------------------------------------------------- merging fixed links */

/* Mass properties of several rigid parts in one frame: exact sums about the origin, then moved to
 * the common centre of mass. */
typedef struct massacc {
    double m;
    fr_vec3 h;  /* Σ m c */
    fr_mat3 Io; /* Σ (R I Rᵀ + m (|c|² 1 − c cᵀ)) about the origin */
} massacc;

static fr_mat3 parallel(double m, fr_vec3 c)
{
    return fr_m3_sub(fr_m3_scale(fr_m3_identity(), m * fr_v3_norm2(c)),
                     fr_m3_scale(fr_m3_outer(c, c), m));
}

static void massacc_add(massacc *a, double m, fr_vec3 com, fr_mat3 I, fr_pose X)
{
    fr_vec3 c = fr_pose_apply(X, com);
    fr_mat3 R = fr_q_to_m3(X.q);
    a->m += m;
    a->h = fr_v3_add(a->h, fr_v3_scale(c, m));
    a->Io = fr_m3_add(a->Io, fr_m3_add(fr_m3_rotate(R, I), parallel(m, c)));
}

/* → mass, centre of mass and inertia about it (dflt_com when massless). */
static void massacc_get(const massacc *a, fr_vec3 dflt_com, double *m, fr_vec3 *com, fr_mat3 *I)
{
    *m = a->m;
    if (!(a->m > 0)) {
        *com = dflt_com;
        *I = a->Io;
        return;
    }
    *com = fr_v3_scale(a->h, 1.0 / a->m);
    fr_mat3 J = fr_m3_sub(a->Io, parallel(a->m, *com));
    /* keep it exactly symmetric */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) J.m[i][j] = J.m[j][i] = 0.5 * (J.m[i][j] + J.m[j][i]);
    /* The sum of physical parts is physical, but moving it to the centre of mass subtracts
     * m·|c|² terms from sums that hold them: parts with no inertia of their own (iCub's point
     * masses) leave only the rounding of that cancellation (moments of ±1e-18 kg·m² in its head
     * and legs), which the tree rejects as not positive semi-definite. Its nearest physical
     * tensor is the exact sum to that rounding: taken without a word. */
    fr_urdf_balance_inertia(J, &J);
    *I = J;
}

/* ---------------------------------------------------------------- singular joints */

/* Every joint must move some inertia along its motion, or its equation of motion (the
 * articulated-body algorithm's D = Sᵀ Iᴬ S) is singular: a revolute joint whose child and what it
 * carries are point masses on its axis (pointmass.urdf), or iCub's neck_pitch, whose child
 * neck_2 is a point mass on its axis and whose head turns about the next joint with no
 * inertia about this one. ABA's D of every joint coordinate at the initial configuration, with
 * the armature fr_urdf_opts.armature gives (fr_tree_joint_inertias, linear in the links): one
 * not above FR_TREE_SINGULAR_REL of the same with the joints just beyond locked (the scale of
 * its rounding) and FR_TREE_SINGULAR_ABS is an error located at the joint, each joint once. Peers:
 * Drake throws at the first step ("An internal mass matrix associated with the joint that connects
 * body A to body B is not positive-definite..."), MuJoCo refuses to compile ("mass and inertia of
 * moving bodies must be larger than mjMINVAL"); urdfdom and Pinocchio load such a file (Pinocchio's
 * ABA then divides by 0). */
static int check_joint_inertia(fri_urdf_parser *p, fr_urdf *u, const xmlNode *root,
                               const xmlNode **jnode, const xmlNode **lnode)
{
    fr_urdf_tree_opts to = fr_urdf_tree_opts_default();
    to.armature = p->o->armature >= 0 && isfinite(p->o->armature) ? p->o->armature : 0;
    to.fixed_base = p->o->fixed_base;
    fr_tree *t = NULL;
    int err = fr_urdf_build_tree(u, &to, &t, NULL);
    if (err == FR_ERR_NOMEM) return err;
    if (err) {
        fri_urdf_err(p, root, NULL, err, "cannot build the articulated tree of this robot: %s",
                     fr_strerror(err));
        return FR_OK; /* counted in p->nerrors */
    }
    int n = fr_tree_nv(t);
    fr_tree_data *d = fr_tree_data_create(t);
    double *D = malloc(sizeof *D * ((size_t)n + 1));
    double *diag = malloc(sizeof *diag * ((size_t)n + 1));
    int *reported = calloc((size_t)fr_tree_nlinks(t) + 1, sizeof *reported);
    if (!d || !D || !diag || !reported) err = FR_ERR_NOMEM;
    if (!err) fr_tree_joint_inertias(t, d, D, diag);
    for (int k = 0; !err && k < n; k++) {
        double piv = D[k];
        if (piv > FR_TREE_SINGULAR_REL * diag[k] && piv > FR_TREE_SINGULAR_ABS) continue;
        int li = -1;
        for (int i = 0; i < fr_tree_nlinks(t) && li < 0; i++) {
            int v0 = fr_tree_link_v_index(t, i), nv = fr_tree_link_nv(t, i);
            if (nv > 0 && v0 <= k && k < v0 + nv) li = i;
        }
        if (li < 0 || reported[li]++) continue;
        const fr_urdf_link *L = &u->links[li];
        char carried[160] = "";
        if (L->mass > 0 && !(fr_m3_trace(L->inertia) > 1e-12 * L->mass))
            snprintf(carried, sizeof carried,
                     "; link '%.80s' is a point mass (%g kg, no <inertia>)", L->name, L->mass);
        const fr_urdf_joint *j = u->has_joint[li] ? &u->joints[li] : NULL;
        if (j && (j->type == FR_URDF_REVOLUTE || j->type == FR_URDF_CONTINUOUS))
            fri_urdf_err(p, jnode[li], NULL, FR_ERR_RANGE,
                         "joint '%s' turns link '%s' and what it carries, which have no inertia "
                         "about its axis with the joints beyond it free (%.3g kg·m²; %.3g with "
                         "the next ones locked): its motion is singular%s. Give them inertia about "
                         "the axis, "
                         "or the joint an armature (a scene's robot `armature`)",
                         j->name, L->name, piv, diag[k], carried);
        else if (j && j->type == FR_URDF_PRISMATIC)
            fri_urdf_err(p, jnode[li], NULL, FR_ERR_RANGE,
                         "joint '%s' slides link '%s' and what it carries, which have no mass "
                         "along its axis with the joints beyond it free (%.3g kg): its motion is "
                         "singular. Give them mass, or the joint an armature (a scene's robot "
                         "`armature`)",
                         j->name, L->name, piv);
        else
            fri_urdf_err(p, j ? jnode[li] : lnode[li], NULL, FR_ERR_RANGE,
                         "link '%s' is free to turn (a %s joint) but it and what it carries have "
                         "no inertia about one of its axes (%.3g kg·m²): its motion is "
                         "singular%s. Give it a rotational inertia",
                         L->name, j ? "floating" : "free root", piv, carried);
    }
    free(reported);
    free(diag);
    free(D);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
    return err;
}

/* ---------------------------------------------------------------- assembling */

static const char *joint_type_name(fr_urdf_joint_type t)
{
    static const char *const n[] = {"fixed", "revolute", "continuous", "prismatic", "floating"};
    return n[t];
}

static bool one_dof(fr_urdf_joint_type t)
{
    return t == FR_URDF_REVOLUTE || t == FR_URDF_CONTINUOUS || t == FR_URDF_PRISMATIC;
}

int fri_urdf_assemble(fri_urdf_parser *p, xmlNode *root, char *rname, fri_raw_link *rl, int nl,
                      fri_raw_joint *rj, int nj, fri_raw_trans *tr, int ntr, fr_urdf **out)
{
    int nl_all = nl;
    int failed = connect(p, rl, &nl_all, rj, nj);
    int *order = calloc((size_t)nl_all + 1, sizeof *order);
    int norder = order ? 0 : FR_ERR_NOMEM;
    bool world = false;
    if (order && nl_all > 0)
        norder = order_tree(p, root, rl, nl_all, rj, nj, failed, order, &world);
    fr_urdf *u = NULL;
    int err = norder < 0 ? norder : FR_OK;
    /* tree-order arrays (the links' data moved out of the raw records) */
    fr_urdf_link *L = NULL;
    fr_urdf_joint *J = NULL;
    bool *hj = NULL;
    int *body = NULL, *newidx = NULL;
    fr_pose *X = NULL;
    const xmlNode **lnode = NULL;
    fri_raw_joint **jraw = NULL;
    if (!err && norder > 0) {
        L = calloc((size_t)norder, sizeof *L);
        J = calloc((size_t)norder, sizeof *J);
        hj = calloc((size_t)norder, sizeof *hj);
        body = calloc((size_t)norder, sizeof *body);
        newidx = calloc((size_t)norder, sizeof *newidx);
        X = calloc((size_t)norder, sizeof *X);
        lnode = calloc((size_t)norder, sizeof *lnode);
        jraw = calloc((size_t)norder, sizeof *jraw);
        if (!L || !J || !hj || !body || !newidx || !X || !lnode || !jraw) err = FR_ERR_NOMEM;
    }
    for (int i = 0; !err && i < norder; i++) {
        fri_raw_link *R = &rl[order[i]];
        L[i] = R->l;
        R->l.name = NULL; /* moved */
        R->l.ncollisions = 0;
        R->cols = NULL;
        lnode[i] = R->node;
        J[i].mimic = -1;
        if (R->parent_joint >= 0) {
            fri_raw_joint *Q = &rj[R->parent_joint];
            J[i] = Q->j;
            J[i].parent = rl[Q->j.parent].tree_index; /* -1 for the world */
            J[i].child = i;
            hj[i] = true;
            jraw[i] = Q;
            Q->j.name = NULL;
        }
    }
    /* mimic joints: resolved to the joint they follow (chains composed) */
    for (int i = 0; !err && i < norder; i++) {
        if (!hj[i] || !jraw[i]->mimic_name) continue;
        int m = -1;
        for (int k = 0; k < norder; k++)
            if (hj[k] && !strcmp(J[k].name, jraw[i]->mimic_name)) m = k;
        if (m < 0)
            fri_urdf_err(p, jraw[i]->mimic_node, "joint", FR_ERR_NOTFOUND,
                         "joint '%s' mimics '%s', which is not a joint of this robot", J[i].name,
                         jraw[i]->mimic_name);
        else if (m == i)
            fri_urdf_err(p, jraw[i]->mimic_node, "joint", FR_ERR_PARSE,
                         "joint '%s' cannot mimic itself", J[i].name);
        else if (!one_dof(J[m].type))
            fri_urdf_err(p, jraw[i]->mimic_node, "joint", FR_ERR_PARSE,
                         "joint '%s' mimics '%s', a %s joint (only 1-DOF joints can be followed)",
                         J[i].name, J[m].name, joint_type_name(J[m].type));
        else
            J[i].mimic = m;
    }
    for (int i = 0; !err && i < norder; i++) {
        if (!hj[i]) continue;
        /* a chain a → b → c becomes a → c: q_a = m_a (m_b q_c + o_b) + o_a */
        int steps = 0;
        while (J[i].mimic >= 0 && J[J[i].mimic].mimic >= 0 && steps++ <= norder) {
            int b = J[i].mimic;
            J[i].mimic_offset += J[i].mimic_multiplier * J[b].mimic_offset;
            J[i].mimic_multiplier *= J[b].mimic_multiplier;
            J[i].mimic = J[b].mimic;
        }
        if (J[i].mimic == i || steps > norder) {
            fri_urdf_err(p, jraw[i]->mimic_node, "joint", FR_ERR_PARSE,
                         "joint '%s': its <mimic> joints form a cycle", J[i].name);
            J[i].mimic = -1;
        }
    }
    /* a follower's own limits give way to the constraint: its range is the joint's, mapped */
    for (int i = 0; !err && i < norder; i++) {
        if (!hj[i] || J[i].mimic < 0) continue;
        const fr_urdf_joint *m = &J[J[i].mimic];
        double a = J[i].mimic_multiplier * m->lower + J[i].mimic_offset;
        double b = J[i].mimic_multiplier * m->upper + J[i].mimic_offset;
        double lo = fmin(a, b), hi = fmax(a, b);
        bool own = isfinite(J[i].lower) || isfinite(J[i].upper);
        double tol = 1e-9 * (1 + fabs(lo) + fabs(hi));
        if (own && (lo < J[i].lower - tol || hi > J[i].upper + tol || isnan(lo) || isnan(hi)))
            fri_urdf_warn(p, jraw[i]->mimic_node, NULL,
                          "joint '%s' follows '%s' over [%g, %g], outside its own limits [%g, "
                          "%g]: the follower's limits are not applied (the constraint holds it)",
                          J[i].name, m->name, lo, hi, J[i].lower, J[i].upper);
    }
    /* transmissions */
    for (int t = 0; !err && t < ntr; t++) {
        int k = -1;
        for (int i = 0; i < norder; i++)
            if (hj[i] && !strcmp(J[i].name, tr[t].joint)) k = i;
        if (k < 0) {
            fri_urdf_warn(p, tr[t].joint_node, "name",
                          "<transmission> for '%s', which is not a joint of this robot: ignored",
                          tr[t].joint);
            continue;
        }
        J[k].reduction = tr[t].reduction;
        free((char *)J[k].actuator);
        J[k].actuator = tr[t].actuator;
        tr[t].actuator = NULL;
    }
    if (!err && p->nerrors) err = p->first_err_code ? p->first_err_code : FR_ERR_PARSE;

    /* merge links on fixed joints into their parents (parents come first in tree order) */
    int nkeep = 0, nframes = 0;
    for (int i = 0; !err && i < norder; i++) {
        body[i] = i;
        X[i] = fr_pose_identity();
        bool merge = p->o->merge_fixed && hj[i] && J[i].type == FR_URDF_FIXED && J[i].parent >= 0;
        if (merge) {
            body[i] = body[J[i].parent];
            X[i] = fr_pose_mul(X[J[i].parent], J[i].origin);
            nframes++;
        } else {
            newidx[i] = nkeep++;
        }
    }
    if (!err) {
        u = calloc(1, sizeof *u);
        if (u) {
            u->links = calloc((size_t)nkeep, sizeof *u->links);
            u->joints = calloc((size_t)nkeep, sizeof *u->joints);
            u->has_joint = calloc((size_t)nkeep, sizeof *u->has_joint);
            u->frames = calloc((size_t)nframes + 1, sizeof *u->frames);
        }
        if (!u || !u->links || !u->joints || !u->has_joint || !u->frames) err = FR_ERR_NOMEM;
    }
    for (int i = 0; !err && i < norder; i++) {
        if (body[i] != i) continue;
        int s = newidx[i];
        /* the parts: this link and every link merged into it */
        massacc acc = {0, fr_v3_zero(), fr_m3_zero()};
        int ncol = 0, nparts = 0;
        for (int k = i; k < norder; k++)
            if (body[k] == i) {
                massacc_add(&acc, L[k].mass, L[k].com, L[k].inertia, X[k]);
                ncol += L[k].ncollisions;
                nparts++;
            }
        fr_urdf_link *D = &u->links[s];
        *D = L[i];
        L[i].name = NULL;
        if (nparts > 1) massacc_get(&acc, L[i].com, &D->mass, &D->com, &D->inertia);
        fr_urdf_collision *cols = calloc((size_t)ncol + 1, sizeof *cols);
        if (!cols) {
            err = FR_ERR_NOMEM;
            break;
        }
        int c = 0;
        for (int k = i; k < norder; k++) {
            if (body[k] != i) continue;
            for (int m = 0; m < L[k].ncollisions; m++) {
                cols[c] = L[k].collisions[m];
                cols[c].origin = fr_pose_mul(X[k], cols[c].origin);
                c++;
            }
            free((void *)L[k].collisions);
            L[k].collisions = NULL;
            L[k].ncollisions = 0;
        }
        D->collisions = cols;
        D->ncollisions = c;
        if (hj[i]) {
            u->joints[s] = J[i];
            J[i].name = NULL;
            J[i].actuator = NULL;
            int par = J[i].parent;
            if (par >= 0) {
                u->joints[s].parent = newidx[body[par]];
                u->joints[s].origin = fr_pose_mul(X[par], J[i].origin);
            }
            u->joints[s].child = s;
            if (J[i].mimic >= 0) u->joints[s].mimic = newidx[J[i].mimic];
            u->has_joint[s] = true;
        }
    }
    for (int i = 0, f = 0; !err && i < norder; i++) {
        if (body[i] == i) continue;
        fr_urdf_frame *F = &u->frames[f++];
        F->name = L[i].name;
        L[i].name = NULL;
        F->link = newidx[body[i]];
        F->pose = X[i];
        F->line = L[i].line;
    }
    if (!err) {
        u->nlinks = nkeep;
        u->nframes = nframes;
        u->name = rname;
        rname = NULL;
        for (int s = 0; s < nkeep; s++)
            if (u->has_joint[s] && u->joints[s].mimic >= 0) {
                u->nmimic++;
                u->joints[s].mimic_joint = u->joints[u->joints[s].mimic].name;
            }
    }
    /* a movable joint (or a free root) must move some mass, or its equation is singular; the
     * mass each joint moves is its subtree's, summed from the leaves (children come after their
     * parents in tree order): linear in the links */
    double *sub = !err ? calloc((size_t)nkeep + 1, sizeof *sub) : NULL;
    if (!err && !sub) err = FR_ERR_NOMEM;
    /* A robot with joints and no mass at all is a description for display (Spot's
     * spot_description has no <inertial>): giving its links 1 g only moved the failure to an
     * unexplained singular root. (A lone massless link, an object, is still given 1 g.) */
    double total = 0.0;
    bool moves = false;
    for (int i = 0; !err && i < nkeep; i++) {
        total += u->links[i].mass + fr_m3_trace(u->links[i].inertia);
        moves = moves || (u->has_joint[i] && u->joints[i].type != FR_URDF_FIXED);
    }
    const bool no_mass = !err && moves && !(total > 0.0);
    if (no_mass) {
        fri_urdf_err(p, root, NULL, FR_ERR_RANGE,
                     "robot '%s' has no mass: none of its %d links has an <inertial> with a "
                     "mass or an inertia (a description for display only?). Give its links "
                     "their masses and inertias to simulate it",
                     u->name, norder);
    }
    for (int i = nkeep - 1; !err && !no_mass && i >= 0; i--) {
        sub[i] += u->links[i].mass + fr_m3_trace(u->links[i].inertia);
        int par = u->has_joint[i] ? u->joints[i].parent : -1;
        double m = sub[i];
        bool movable = !u->has_joint[i] || u->joints[i].type != FR_URDF_FIXED;
        if (!movable || m > 0) {
            if (par >= 0 && par < i) sub[par] += sub[i];
            continue;
        }
        fr_urdf_link *D = &u->links[i];
        /* the original's index for its location */
        int orig = -1;
        for (int k = 0; k < norder; k++)
            if (body[k] == k && newidx[k] == i) orig = k;
        D->mass = FR_URDF_MIN_MASS;
        D->inertia =
            fr_m3_diag(fr_v3(FR_URDF_MIN_INERTIA, FR_URDF_MIN_INERTIA, FR_URDF_MIN_INERTIA));
        if (u->has_joint[i])
            fri_urdf_warn(p, jraw[orig]->node, NULL,
                          "joint '%s' moves only massless links: link '%s' is given %g kg and "
                          "%g kg·m² (FR_URDF_MIN_MASS, FR_URDF_MIN_INERTIA)",
                          u->joints[i].name, D->name, FR_URDF_MIN_MASS, FR_URDF_MIN_INERTIA);
        else
            fri_urdf_warn(p, lnode[orig], NULL,
                          "the root link '%s' and the links fixed to it have no mass: it is "
                          "given %g kg and %g kg·m²",
                          D->name, FR_URDF_MIN_MASS, FR_URDF_MIN_INERTIA);
        sub[i] += D->mass + fr_m3_trace(D->inertia);
        if (par >= 0 && par < i) sub[par] += sub[i];
    }
    free(sub);
    if (!err && !p->nerrors) {
        /* the original element of each kept link, to locate what the tree finds */
        const xmlNode **jn = calloc((size_t)nkeep + 1, sizeof *jn);
        const xmlNode **ln = calloc((size_t)nkeep + 1, sizeof *ln);
        if (!jn || !ln) err = FR_ERR_NOMEM;
        for (int k = 0; !err && k < norder; k++)
            if (body[k] == k) {
                jn[newidx[k]] = hj[k] ? jraw[k]->node : NULL;
                ln[newidx[k]] = lnode[k];
            }
        if (!err) err = check_joint_inertia(p, u, root, jn, ln);
        free((void *)jn);
        free((void *)ln);
    }
    if (!err && p->nerrors) err = p->first_err_code ? p->first_err_code : FR_ERR_PARSE;
    /* what was not moved into u */
    for (int i = 0; L && i < norder; i++) {
        free((char *)L[i].name);
        for (int k = 0; k < L[i].ncollisions; k++)
            fri_urdf_free_collision((fr_urdf_collision *)&L[i].collisions[k]);
        free((void *)L[i].collisions);
        if (hj && hj[i]) {
            free((char *)J[i].name);
            free((char *)J[i].actuator);
        }
    }
    free(L);
    free(J);
    free(hj);
    free(body);
    free(newidx);
    free(X);
    free(lnode);
    free(jraw);
    free(order);
    free(rname);
    fri_urdf_free_raw(rl, nl_all, rj, nj, tr, ntr);
    if (err) {
        fr_urdf_destroy(u);
        return err;
    }
    *out = u;
    return FR_OK;
}
