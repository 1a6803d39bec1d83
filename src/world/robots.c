/* Articulated robots in the world: each tree's links are mirrored by FR_BODY_LINK bodies that
 * carry shapes into the contact stage and bring contact forces back into the tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

int fri_world_robot_init(fr_world *w)
{
    w->robots = FR_ARENA_NEW(&w->arena, fri_robot, w->def.max_robots > 0 ? w->def.max_robots : 1);
    w->touching = FR_ARENA_NEW(&w->arena, int, w->def.max_bodies);
    return w->robots && w->touching ? FR_OK : FR_ERR_NOMEM;
}

void fri_world_robot_destroy(fr_world *w)
{
    fri_world_loops_destroy(w);
    for (int r = 0; r < w->nrobots; r++) {
        fr_tree_data_destroy(w->robots[r].data);
        fr_tree_destroy(w->robots[r].tree);
        free(w->robots[r].links);
        free(w->robots[r].q_save);
        free(w->robots[r].qd_save);
        free(w->robots[r].q_new);
        free(w->robots[r].lbuf);
        free(w->robots[r].names);
    }
    w->nrobots = 0;
}

/* Body state of a link from its tree: origin at the centre of mass, link axes. */
static void sync_link(fr_world *w, const fri_robot *rb, int link)
{
    int slot = fri_body_slot(w, rb->links[link]);
    if (slot < 0) return;
    const fr_link_def *ld = fr_tree_link_def(rb->tree, link);
    fr_pose lp = rb->data->pose[link];
    fr_vec3 com = fr_pose_apply(lp, ld->com);
    fri_body_state *s = &w->state[slot];
    s->pose = (fr_pose){com, lp.q};
    s->vel = fr_tree_point_velocity(rb->data, link, com);
    s->angvel = fr_q_rotate(lp.q, rb->data->vel[link].ang);
}

void fr_world_robot_sync(fr_world *w, int r)
{
    if (r < 0 || r >= w->nrobots) return;
    fri_robot *rb = &w->robots[r];
    fr_tree_forward_kinematics(rb->tree, rb->data);
    for (int i = 0; i < rb->nlinks; i++) sync_link(w, rb, i);
}

/* A link's contact stiffness is mass-scaled (docs/world.md): with the robot's total mass a light
 * link (a fingertip, a foot whose joint gave way) or a point far from a link's centre of mass is
 * driven far past what the implicit step keeps stable (measured: 6 of 14 corpus robots went NaN).
 * The mass a contact there actually moves is the tree's effective mass at that point:
 * 1/(uᵀ Λ⁻¹ u) with Λ⁻¹ = J_p M⁻¹ J_pᵀ (M from CRBA, armature included). Per link this takes the
 * smallest over its shapes' vertices of 3/tr(Λ⁻¹) (the harmonic mean over directions, so it does
 * not depend on which way the link happens to face), at the current configuration: with
 * A = [J_ω; J_v] M⁻¹ [J_ω; J_v]ᵀ at the centre of mass, a point p away from it has
 * Λ⁻¹ = B A Bᵀ, B = [−[p]×, 1]. */
int fr_world_robot_set_contact_masses(fr_world *w, int r)
{
    if (r < 0 || r >= w->nrobots) return FR_ERR_INVAL;
    fri_robot *rb = &w->robots[r];
    const fr_tree *t = rb->tree;
    fr_tree_data *d = rb->data;
    int nv = fr_tree_nv(t), n = rb->nlinks;
    double *M = malloc(sizeof(double) * (size_t)(nv * nv + 12 * nv + 1));
    if (!M) return FR_ERR_NOMEM;
    double *J = M + nv * nv, *X = J + 6 * nv;
    fr_tree_forward_kinematics(t, d);
    fr_tree_crba(t, d, M);
    if (!fr_chol_factor(M, nv)) {
        free(M);
        return FR_ERR_NUMERIC;
    }
    for (int i = 0; i < n; i++) {
        int slot = fri_body_slot(w, rb->links[i]);
        if (slot < 0) continue;
        fr_vec3 c = w->state[slot].pose.p;
        fr_tree_point_jacobian(t, d, i, c, J, J + 3 * nv);
        for (int k = 0; k < 6; k++) {
            memcpy(X + k * nv, J + k * nv, sizeof(double) * (size_t)nv);
            fr_chol_solve(M, nv, X + k * nv);
        }
        double A[6][6];
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                double s = 0;
                for (int k = 0; k < nv; k++) s += J[a * nv + k] * X[b * nv + k];
                A[a][b] = s;
            }
        double mmin = INFINITY;
        for (int k = 0; k < w->nshapes; k++) {
            const fri_shape_inst *si = &w->shapes[k];
            if (!fr_body_id_eq(si->body, rb->links[i])) continue;
            const fr_polytope *P = &si->shape->poly;
            for (int v = 0; v < P->nverts; v++) {
                /* the vertex, relative to the centre of mass, world axes */
                fr_vec3 p =
                    fr_q_rotate(w->state[slot].pose.q, fr_pose_apply(si->local, P->verts[v]));
                /* v_p = v − p × ω = [−[p]× 1] (ω; v): Λ⁻¹ = B A Bᵀ with B = [−[p]×, 1] */
                double B[3][6];
                fr_mat3 Px = fr_m3_skew(p);
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        B[a][b] = -Px.m[a][b];
                        B[a][b + 3] = a == b;
                    }
                fr_mat3 L;
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        double s = 0;
                        for (int e = 0; e < 6; e++)
                            for (int f = 0; f < 6; f++) s += B[a][e] * A[e][f] * B[b][f];
                        L.m[a][b] = s;
                    }
                double inv = (L.m[0][0] + L.m[1][1] + L.m[2][2]) / 3.0;
                if (inv > 0 && 1.0 / inv < mmin) mmin = 1.0 / inv;
            }
        }
        if (isfinite(mmin) && mmin > 0) w->model[slot].mass = fmin(mmin, rb->total_mass);
    }
    free(M);
    return FR_OK;
}

/* The mass a contact on link body `slot` at p moves within one step: the tree's effective mass
 * there on the step's articulated inertias without contacts (fr_tree_point_inv_mass), as the
 * harmonic mean over directions 3/tr(Λ⁻¹) like the link's contact mass (along the normal alone
 * it is far larger than what the patch's tilt and friction move: the LEAP hand's fingers
 * diverged), at most the robot's mass. */
static double link_mass_at(fr_world *w, int slot, fr_vec3 p)
{
    fri_robot *rb = &w->robots[w->model[slot].robot];
    const uint64_t stamp = w->steps + 1;
    if (rb->resp_stamp != stamp) {
        if (fr_tree_point_mass_prepare(rb->tree, rb->data, w->h) != FR_OK) return 0.0;
        rb->resp_stamp = stamp;
    }
    fr_mat3 L = fr_tree_point_inv_mass3(rb->tree, rb->data, w->model[slot].link, p);
    double tr = L.m[0][0] + L.m[1][1] + L.m[2][2];
    return tr > 0.0 && isfinite(tr) ? fmin(3.0 / tr, rb->total_mass) : rb->total_mass;
}

/* Share of the largest patch (A_ref) below which a link contact's patch keeps the stiffness of
 * that share (docs/robots.md, "Contact on robot links"). */
#define LINK_AREA_FLOOR 0.01

void fri_world_link_contact_scale(fr_world *w, fri_pair *p, double aref, bool fresh)
{
    const fri_body_model *A = &w->model[p->slot_a], *B = &w->model[p->slot_b];
    const fr_contact_model *m = &p->model;
    double ma = A->mass, mb = B->mass;
    double ea = A->type == FR_BODY_LINK ? link_mass_at(w, p->slot_a, m->point) : ma;
    double eb = B->type == FR_BODY_LINK ? link_mass_at(w, p->slot_b, m->point) : mb;
    if (A->type == FR_BODY_STATIC) ma = ea = 0.0;
    if (B->type == FR_BODY_STATIC) mb = eb = 0.0;
    /* never below the link's contact mass (the smallest over its shapes' vertices, which keeps
     * light links stable): only raised where the tree behind the point is heavier */
    double m0 = fr_contact_reduced_mass(ma, mb), m1 = fr_contact_reduced_mass(ea, eb);
    const double s_mass = m0 > 0.0 && m1 > m0 ? m1 / m0 : 1.0;
    double s = s_mass;
    /* the volume law gives a patch the share A/A_ref of the pair's stiffness: a corner or an edge
     * that lands takes almost nothing until it is millimetres deep */
    if (aref > 0.0 && m->area < aref) s *= aref / fmax(m->area, LINK_AREA_FLOOR * aref);
    /* The factor changes from step to step with the patch and the configuration, and a law that
     * stiffens while the depth stays gives the work back that it never took (a walking
     * hexapod's feet gained energy, 0.044 J in one tick, as they lifted): over one contact it
     * only falls (a rebuild can then only let elastic energy go, never make it). */
    p->link_scale = fresh ? s : fmin(p->link_scale, s);
    fr_contact_model_scale_normal(&p->model, p->link_scale);
    /* The band (what can close within the step) takes the factor the patch it closes into will
     * have, from the patch's area and its own: the sliver's factor on it stiffened a landing's
     * band a hundredfold (other landings rose by up to 1.2 J), the mass factor alone left it
     * softer than the patch it becomes (a falling iCub's head: 3 kJ in a tick at 5 ms) */
    double area = m->area;
    for (int q = FR_CONTACT_PATCH_PTS; q < m->npts; q++) area += m->pw[q];
    double sb = s_mass;
    if (aref > 0.0 && area < aref) sb *= aref / fmax(area, LINK_AREA_FLOOR * aref);
    fr_contact_model_scale_band(&p->model, sb / p->link_scale);
}

int fr_world_add_robot(fr_world *w, const fr_robot_def *def, int *out)
{
    if (!def || !def->tree) return FR_ERR_INVAL;
    fr_tree *tree = def->tree;
    int err = FR_OK;
    if (w->locked)
        err = FR_ERR_LOCKED;
    else if (w->nrobots >= w->def.max_robots)
        err = FR_ERR_FULL;
    else if (!def->name[0] || strchr(def->name, '/'))
        err = FR_ERR_INVAL;
    for (int r = 0; !err && r < w->nrobots; r++)
        if (!strcmp(w->robots[r].name, def->name)) err = FR_ERR_INVAL;
    int nl = err ? 0 : fr_tree_nlinks(tree);
    if (!err && (nl < 1 || nl > (w->cap - w->nslots) + w->nfree)) err = FR_ERR_FULL;
    fri_robot *rb = err ? NULL : &w->robots[w->nrobots];
    if (rb) {
        memset(rb, 0, sizeof *rb);
        rb->data = fr_tree_data_create(tree);
        rb->links = calloc((size_t)nl, sizeof *rb->links);
        rb->q_save = calloc((size_t)fr_tree_nq(tree) + 1, sizeof(double));
        rb->qd_save = calloc((size_t)fr_tree_nv(tree) + 1, sizeof(double));
        rb->q_new = calloc((size_t)fr_tree_nq(tree) + 1, sizeof(double));
        rb->lbuf = calloc(7 * (size_t)fr_tree_nv(tree) + 1, sizeof(double));
        size_t len = 0;
        for (int i = 0; i < nl; i++)
            len += strlen(def->name) + strlen(fr_tree_link_def(tree, i)->name) + 2;
        rb->names = malloc(len + 1);
        if (!rb->data || !rb->links || !rb->q_save || !rb->qd_save || !rb->q_new || !rb->lbuf ||
            !rb->names)
            err = FR_ERR_NOMEM;
    }
    if (err) {
        if (rb) {
            fr_tree_data_destroy(rb->data);
            free(rb->links);
            free(rb->q_save);
            free(rb->qd_save);
            free(rb->q_new);
            free(rb->lbuf);
            free(rb->names);
        }
        fr_tree_destroy(tree);
        return err;
    }
    rb = &w->robots[w->nrobots];
    snprintf(rb->name, sizeof rb->name, "%s", def->name);
    rb->tree = tree;
    rb->nlinks = nl;
    rb->self_collide = def->self_collide;
    rb->data->gravity = w->def.gravity;
    for (int i = 0; i < nl; i++) rb->total_mass += fr_tree_link_def(tree, i)->mass;
    fr_tree_forward_kinematics(tree, rb->data);
    int index = w->nrobots;
    char *nm = rb->names;
    for (int i = 0; i < nl; i++) {
        const fr_link_def *ld = fr_tree_link_def(tree, i);
        fr_body_def bd = fr_body_def_default();
        /* the body's own name field is short: the whole name lives in rb->names */
        size_t nlen = (size_t)sprintf(nm, "%s/%s", rb->name, ld->name);
        snprintf(bd.name, sizeof bd.name, "%s", nm);
        bd.type = FR_BODY_LINK;
        bd.mass = rb->total_mass > 0 ? rb->total_mass : 1.0;
        err = fri_world_add_body_internal(w, &bd, &rb->links[i]);
        if (err) {
            for (int k = 0; k < i; k++) fr_world_remove_body(w, rb->links[k]);
            fr_tree_data_destroy(rb->data);
            fr_tree_destroy(tree);
            free(rb->links);
            free(rb->q_save);
            free(rb->qd_save);
            free(rb->q_new);
            free(rb->lbuf);
            free(rb->names);
            return err;
        }
        int slot = fri_body_slot(w, rb->links[i]);
        w->model[slot].long_name = nm;
        nm += nlen + 1;
        w->model[slot].robot = index;
        w->model[slot].link = i;
        w->model[slot].parent_link = ld->parent;
    }
    w->nrobots++;
    fr_world_robot_sync(w, index);
    /* mimic joints are rows of the world's constraint solver (loops.c) */
    if ((err = fri_world_robot_loops_init(w, index))) return err;
    if (out) *out = index;
    return FR_OK;
}

int fr_world_robot_count(const fr_world *w)
{
    return w->nrobots;
}

int fr_world_find_robot(const fr_world *w, const char *name, int *out)
{
    for (int r = 0; r < w->nrobots; r++)
        if (!strcmp(w->robots[r].name, name)) {
            *out = r;
            return FR_OK;
        }
    return FR_ERR_NOTFOUND;
}

const char *fr_world_robot_name(const fr_world *w, int r)
{
    return r >= 0 && r < w->nrobots ? w->robots[r].name : "";
}
const fr_tree *fr_world_robot_tree(const fr_world *w, int r)
{
    return r >= 0 && r < w->nrobots ? w->robots[r].tree : NULL;
}
fr_tree_data *fr_world_robot_data(fr_world *w, int r)
{
    return r >= 0 && r < w->nrobots ? w->robots[r].data : NULL;
}

fr_body_id fr_world_robot_link_body(const fr_world *w, int r, int link)
{
    if (r < 0 || r >= w->nrobots || link < 0 || link >= w->robots[r].nlinks) return FR_BODY_NULL;
    return w->robots[r].links[link];
}

int fr_world_set_robot_controller(fr_world *w, int r, fr_controller_fn fn, void *user)
{
    if (r < 0 || r >= w->nrobots) return FR_ERR_INVAL;
    if (w->locked) return FR_ERR_LOCKED;
    w->robots[r].ctl = fn;
    w->robots[r].ctl_user = user;
    return FR_OK;
}

bool fri_world_links_filtered(const fr_world *w, int sa, int sb)
{
    const fri_body_model *a = &w->model[sa], *b = &w->model[sb];
    if (a->type != FR_BODY_LINK || b->type != FR_BODY_LINK || a->robot != b->robot) return false;
    if (!w->robots[a->robot].self_collide) return true;
    return a->parent_link == b->link || b->parent_link == a->link;
}

bool fri_world_body_immovable(const fr_world *w, int slot)
{
    const fri_body_model *m = &w->model[slot];
    if (m->type == FR_BODY_STATIC) return true;
    if (m->type != FR_BODY_LINK) return false;
    const fr_tree *t = w->robots[m->robot].tree;
    for (int l = m->link; l >= 0;) {
        const fr_link_def *ld = fr_tree_link_def(t, l);
        if (!ld || ld->type != FR_JOINT_FIXED) return false;
        l = ld->parent;
    }
    return true;
}

/* A robot's step failed: name the joint (FR_ERR_NUMERIC: a non-finite acceleration; FR_ERR_RANGE:
 * an absurd speed). */
static int robot_fault(fr_world *w, const fri_robot *rb, int why)
{
    const fr_tree *t = rb->tree;
    int l = rb->data->fault_link;
    char name[160];
    if (l < 0 || l >= rb->nlinks) {
        snprintf(name, sizeof name, "%s", rb->name);
        return fri_world_fault(w, "robot", name, "joint acceleration", NAN);
    }
    const fr_link_def *ld = fr_tree_link_def(t, l);
    snprintf(name, sizeof name, "%s/%s", rb->name, ld->joint_name);
    int vi = fr_tree_link_v_index(t, l);
    if (why == FR_ERR_RANGE)
        return fri_world_fault(w, "joint", name,
                               ld->type == FR_JOINT_PRISMATIC ? "joint velocity (m/s)"
                                                              : "joint velocity (rad/s)",
                               rb->data->qd[vi]);
    return fri_world_fault(w, "joint", name, "joint acceleration", rb->data->qdd[vi]);
}

/* The link body's velocity (ω; v of its centre of mass), world, from the tree's last kinematics. */
static fr_svec link_nu(const fri_robot *rb, int link)
{
    const fr_link_def *ld = fr_tree_link_def(rb->tree, link);
    fr_pose lp = rb->data->pose[link];
    fr_vec3 com = fr_pose_apply(lp, ld->com);
    return fr_sv(fr_q_rotate(lp.q, rb->data->vel[link].ang),
                 fr_tree_point_velocity(rb->data, link, com));
}

/* The link of robot r in pair p (its slot), or −1; *other is the other body's slot. */
static int pair_link(const fr_world *w, const fri_pair *p, int r, int *other, bool *is_a)
{
    if (w->model[p->slot_a].type == FR_BODY_LINK && w->model[p->slot_a].robot == r) {
        *other = p->slot_b;
        *is_a = true;
        return p->slot_a;
    }
    if (w->model[p->slot_b].type == FR_BODY_LINK && w->model[p->slot_b].robot == r) {
        *other = p->slot_a;
        *is_a = false;
        return p->slot_b;
    }
    return -1;
}

/* The next modeled pair from contact *c on that has a link of robot r, *c moved past it, or NULL;
 * *l is the link's slot, *other the other body's, *is_a whether the link is the pair's A. */
static fri_pair *next_link_pair(fr_world *w, int r, int *c, int *l, int *other, bool *is_a)
{
    while (*c < w->ncontacts) {
        fri_pair *p = &w->pairs[w->contacts[(*c)++]];
        if (p->modeled && (*l = pair_link(w, p, r, other, is_a)) >= 0) return p;
    }
    return NULL;
}

/* The pair's other body's velocity as the link's step takes it. */
static fr_svec other_nu(const fr_world *w, const fri_pair *p, int other)
{
    return w->model[other].type == FR_BODY_DYNAMIC ? p->link_other_nu : fri_body_nu(w, other);
}

/* Where a pair's response for robot r is kept: the tree's own side when the other body is in the
 * free bodies' implicit system (which keeps its own side), else the pair's response. */
/* The pair's relative twist (A's less B's, local axes) with the link moving at nu_link. */
static void link_pair_local(const fr_world *w, const fri_pair *p, fr_svec nu_link, int other,
                            bool is_a, double y[6])
{
    fr_svec nuo = other_nu(w, p, other);
    if (is_a)
        fri_pair_local(w, p, nu_link, nuo, y);
    else
        fri_pair_local(w, p, nuo, nu_link, y);
}

static fr_contact_response *link_resp(fr_world *w, fri_pair *p, int other)
{
    return w->model[other].type == FR_BODY_DYNAMIC ? &p->resp_link : &p->resp;
}

/* Does pair p hold its free bodies as a wall would, so that a link's tree must take such a body
 * at its start velocity (start_link_forces)? Only a pair with something immovable or with another
 * link that carries load at the start: pressed against the ground (the Panda's hand landing on a
 * block: taken as free, the hand went deep, 73.7 J in one tick) or between loaded links. A pair
 * of two free bodies does not (a box stacked on a box that lies on a link is no wall: the other
 * box is free too), nor does a link's pair with a gap at the start (a speculative contact with
 * another link). Counted as walls, they gave a link a wall's impulse whenever a second box came
 * within reach: a 0.5 kg box landing on a TIAGo's torso, a 2 kg box falling onto it, took 98 N·s
 * into the tree for 0.35 N·s into the box in one tick (+89.3 J at 1 ms, a new user's trial), and a
 * box landing on an A1's trunk at 5 ms with its hips within reach 37 J. */
static bool pair_holds(const fr_world *w, const fri_pair *p)
{
    if (!p->modeled) return false;
    const int ta = w->model[p->slot_a].type, tb = w->model[p->slot_b].type;
    if (ta == FR_BODY_DYNAMIC && tb == FR_BODY_DYNAMIC) return false;
    if ((ta == FR_BODY_LINK || tb == FR_BODY_LINK) && !(p->model.depth0 > 0.0)) return false;
    return true;
}

/*
 * Contacts on the links of robot r enter its tree step implicitly: each pair's response at the
 * link's velocity estimate ν⁽ᵏ⁾ and normal force iterate λ⁽ᵏ⁾ (the other body's velocity known,
 * see fr_contact_respond), linearised there,
 *   W(ν⁺) = W⁽ᵏ⁾ + (S/h)·(t⁽ᵏ⁾ − t⁺),  S = EᵀCE (the response's tangent at the contact point),
 * becomes an external wrench and an external inertia XᵀSX of the link (fr_tree_add_ext_inertia),
 * t the link's twist at the point. The step is repeated from the same start (a Newton iteration
 * on the tree: one ABA each) until the contacts agree with it: every normal force iterate settled
 * and every contact in the state (loaded or not, sticking or slipping) it was linearised in.
 */
/* The force iterates of robot r's link contacts at their models' start; returns how many. */
static int start_link_forces(fr_world *w, int r)
{
    int n = 0;
    for (int c = 0, l, other; c < w->ncontacts;) {
        bool is_a;
        fri_pair *p = next_link_pair(w, r, &c, &l, &other, &is_a);
        if (p) {
            memcpy(p->lam_link, p->model.pn0, sizeof p->lam_link);
            p->nlag_link = p->model.n0;
            p->link_other_nu = fri_body_nu(w, other); /* (its start: the load held as it was) */
            p->link_k = 0;
            p->link_on = p->link_flip = p->link_kink = p->link_open = p->link_freed = 0;
            for (int q = 0; q < p->model.npts; q++)
                if (p->model.pn0[q] > 0.0) p->link_on |= (unsigned short)(1u << q);
            /* the body's mobility is its own only where this pair is all it touches: pressed
             * against the ground (the Panda's hand landing on a block) it yields far less than
             * its mass says, and taken as free the hand went deep (73.7 J in one tick); there,
             * and where it touches several links, the tree takes its start velocity */
            p->link_alone = false;
            /* (not while the world settles: a box placed 15 mm into the Go1's trunk was pushed
             * out 36 mm at 5 ms, beyond the settle's allowance, and the run started from the
             * overlap and threw it; settled without, it rests at 1e-6 m/s from the start at
             * 5 ms, and at 1–2 ms trembles at mm/s after the settle, down to 1e-6 m/s in 4 s) */
            if (w->model[other].type == FR_BODY_DYNAMIC && !w->settling)
                p->link_alone = w->touching[other] == (pair_holds(w, p) ? 1 : 0);
            n++;
        }
    }
    return n;
}

/* After the fallback pass (linearised at the start's forces and velocities): each link contact's
 * response at the velocities the step reached, taken in the start's configuration as the
 * contacts' Jacobians are. The step reports these forces and elastic energy, and commits their
 * bonds; those of the start's velocities, extrapolated over the whole step, are not where it
 * ended (a Go1 whose trunk landed flat read 1.7 J of elastic energy for one tick). */
static void link_responses_at_end(fr_world *w, int r)
{
    fri_robot *rb = &w->robots[r];
    const size_t qbytes = sizeof(double) * (size_t)fr_tree_nq(rb->tree);
    memcpy(rb->q_new, rb->data->q, qbytes);
    memcpy(rb->data->q, rb->q_save, qbytes);
    fr_tree_forward_kinematics(rb->tree, rb->data);
    for (int c = 0, l, other; c < w->ncontacts;) {
        bool is_a;
        fri_pair *p = next_link_pair(w, r, &c, &l, &other, &is_a);
        if (!p) break;
        double y[6];
        const fr_svec nul = link_nu(rb, w->model[l].link);
        fri_link_body_follow(w, p, other,
                             fri_twist_at(nul, fr_v3_sub(p->model.point, w->state[l].pose.p)));
        link_pair_local(w, p, nul, other, is_a, y);
        fr_contact_respond(&p->model, y, w->h, p->mu, p->lam_link, p->nlag_link, 0u,
                           link_resp(w, p, other));
    }
    memcpy(rb->data->q, rb->q_new, qbytes);
    fr_tree_forward_kinematics(rb->tree, rb->data);
}

/* A pair's state as a tangent takes it: loaded, slipping, stuck again inside the step. */
static unsigned char link_state(const fri_pair *p, const fr_contact_response *rs)
{
    return (unsigned char)((rs->normal > 0.0) | (rs->slip ? 2 : 0) | (p->restuck ? 4 : 0));
}

/* A link step out of iterations keeps its last iterate where every force iterate moved by at
 * most this share of its pair's normal force and the links' velocities by at most
 * LINK_SETTLED_DV (m/s): far below any tolerance a user sets, far above an oscillation's. */
#define LINK_SETTLED 1e-6
/* the share of a contact's normal force by which it may move from where its tangent was taken
 * before a revised iteration takes it anew to stop (below) */
#define LINK_RETANGENT  0.1
#define LINK_SETTLED_DV 1e-6

/*
 * The points of a link contact that the iterates load and unload in turn. A point's law has a
 * kink where its force reaches zero; the Newton step takes the tangent of the side its iterate is
 * on, none of the point's stiffness when it is unloaded, so the next iterate falls through the
 * contact, and from the loaded side the tree may be thrown back off it: the iteration swings
 * between the two for all its iterations (an anymal B's thighs landing at 5 ms between 0 and
 * 16 kN, a fallen Unitree R1's shoulder at 1 ms between 0 and 20–65 kN). A point whose load has
 * switched twice takes the loaded side's tangent while it carries nothing: a spring that starts
 * at the iterate, which the next iterate cannot jump across. Where the point stays open, that
 * spring lets it go only by ~(κ + β)/(1 + κ + β) an iteration, so a point unloaded at two
 * checks in a row under it is released once (the next step then reaches its free motion at
 * once); if its load switches again it keeps the tangent. The force that tangent adds to the
 * tree's step beyond the contact's own, S·(t⁽ᵏ⁾ − t⁺)/h, vanishes only at the fixed point: the
 * step is done only once it is within the tolerance too. Updates p's masks after the check chk
 * against the iterate's response rs.
 */
static void link_kinks(const fr_world *w, fri_pair *p, const fr_contact_response *chk,
                       const fr_contact_response *rs, double m_red, bool *done, bool *settled)
{
    const double h = w->h, ftol = w->def.solver_tolerance * m_red / h;
    for (int q = 0; q < p->model.npts; q++) {
        const unsigned short bit = (unsigned short)(1u << q);
        if (p->link_kink & bit) {
            const double pw = p->model.pw[q], extra = (h * pw * p->model.k + p->model.c * pw) / h *
                                                      fabs(chk->depth[q] - rs->depth[q]);
            if (extra > ftol) *done = false;
            if (extra > ftol && extra > LINK_SETTLED * fmax(chk->normal, rs->normal))
                *settled = false;
        }
        const bool on = chk->elastic[q] > 0.0;
        if (on == ((p->link_on & bit) != 0)) {
            if ((p->link_kink & bit) && !on && !(p->link_freed & bit)) {
                if (p->link_open & bit) {
                    p->link_kink &= (unsigned short)~bit;
                    p->link_flip &= (unsigned short)~bit;
                    p->link_freed |= bit;
                }
                p->link_open |= bit;
            }
            continue;
        }
        p->link_on ^= bit;
        p->link_open &= (unsigned short)~bit;
        if ((p->link_flip & bit) || (p->link_freed & bit)) p->link_kink |= bit;
        p->link_flip |= bit;
    }
}

/* At most this many revised iterations in a row before the tangents are taken again. */
#define REVISE_MAX 6

/*
 * A revised iteration: each link contact's response at the iterate ν⁽ᵏ⁾, with the tangent S of
 * the last full pass kept (its inertias are in the tree's solve), and the tree's step revised
 * for the change of the forces alone (fr_tree_step_revise): the Newton iteration's tangent taken
 * once and reused while every contact keeps the state it was taken in (a chord iteration), which
 * costs a pass up and down the tree instead of an ABA. 1 when the tree could not revise (take the
 * full pass); the forces are then the full pass's to add.
 */
static int revise_pass(fr_world *w, int r)
{
    fri_robot *rb = &w->robots[r];
    const double h = w->h;
    for (int c = 0, l, other; c < w->ncontacts;) {
        bool is_a;
        fri_pair *p = next_link_pair(w, r, &c, &l, &other, &is_a);
        if (!p) break;
        int link = w->model[l].link;
        fr_svec nu0 = fri_body_nu(w, l), nuk = link_nu(rb, link);
        double y[6];
        fr_contact_response *rs = link_resp(w, p, other);
        link_pair_local(w, p, nuk, other, is_a, y);
        /* (the full pass's flags after its first iterate, less the tangent: only C differs) */
        fr_contact_respond(&p->model, y, h, p->mu, p->lam_link, p->nlag_link, 0u, rs);
        fr_svec wr = fr_contact_model_wrench(&p->model, rs->w);
        if (!is_a) wr = fr_sv_neg(wr);
        fr_vec3 c0 = p->model.point, com = w->state[l].pose.p;
        fr_svec tk = fri_twist_at(nuk, fr_v3_sub(c0, com)),
                t0 = fri_twist_at(nu0, fr_v3_sub(c0, com));
        fr_svec f = fr_sv_add(wr, fr_sv_scale(fr_m6_mulv(&p->link_S, fr_sv_sub(tk, t0)), 1.0 / h));
        fr_svec df = fr_sv_sub(f, p->link_f);
        p->link_f = f;
        fr_tree_add_ext_force(rb->data, link, c0, df.lin);
        fr_tree_add_ext_torque(rb->data, link, df.ang);
    }
    memcpy(rb->data->qd, rb->qd_save, sizeof(double) * (size_t)fr_tree_nv(rb->tree));
    return fr_tree_step_revise(rb->tree, rb->data, h) == FR_OK ? 0 : 1;
}

/* A full pass of the iteration: each link contact's response and tangent at the iterate (the
 * start's at it 0) as the link's external force and inertia, the springs' forces, and the tree's
 * step from the start (with its kinematics when it is not iterated). */
static int full_pass(fr_world *w, int r, int it, int npairs, bool first_only)
{
    fri_robot *rb = &w->robots[r];
    const double h = w->h;
    for (int c = 0, l, other; npairs > 0 && c < w->ncontacts;) {
        bool is_a;
        fri_pair *p = next_link_pair(w, r, &c, &l, &other, &is_a);
        if (!p) break;
        int link = w->model[l].link;
        fr_svec nu0 = fri_body_nu(w, l), nuk = it > 0 ? link_nu(rb, link) : nu0;
        double y[6];
        fr_contact_response *rs = link_resp(w, p, other);
        link_pair_local(w, p, nuk, other, is_a, y);
        unsigned fl = FR_RESPOND_TANGENT | (it == 0 ? FR_RESPOND_KINK_LOADED : 0u) |
                      (p->restuck ? FR_RESPOND_STICK_TANGENT : 0u) |
                      (unsigned)p->link_kink * FR_RESPOND_KINK_POINT(0);
        fr_contact_respond(&p->model, y, h, p->mu, p->lam_link, p->nlag_link, fl, rs);
        /* the wrench on the link, and S at the point */
        fr_svec wr = fr_contact_model_wrench(&p->model, rs->w);
        if (!is_a) wr = fr_sv_neg(wr);
        fr_mat6 S;
        fr_contact_tangent_world(&p->model, rs->C, &S);
        fr_vec3 c0 = p->model.point, com = w->state[l].pose.p;
        fr_svec tk = fri_twist_at(nuk, fr_v3_sub(c0, com)),
                t0 = fri_twist_at(nu0, fr_v3_sub(c0, com));
        fr_svec f0 = wr;
        if (w->model[other].type == FR_BODY_DYNAMIC && p->link_alone) {
            p->link_S = S;
            p->link_wr = wr;
            p->link_t = tk;
            fri_link_body_eliminate(w, p, other, fri_link_body_dims(rs), &S, &f0);
        }
        fr_svec f = fr_sv_add(f0, fr_sv_scale(fr_m6_mulv(&S, fr_sv_sub(tk, t0)), 1.0 / h));
        if (!p->link_alone) p->link_S = S; /* (what a revised iteration keeps) */
        p->link_f = f;
        p->link_lin = link_state(p, rs);
        p->link_nlin = rs->normal;
        fr_tree_add_ext_force(rb->data, link, c0, f.lin);
        fr_tree_add_ext_torque(rb->data, link, f.ang);
        fr_mat6 I;
        fr_contact_blocks(&S, c0, fr_v3_zero(), fr_v3_zero(), &I, NULL, NULL);
        fr_tree_add_ext_inertia(rb->data, link, &I);
    }
    /* spring (and, in explicit mode, contact) forces gathered on the link bodies */
    for (int i = 0; i < rb->nlinks; i++) {
        int slot = fri_body_slot(w, rb->links[i]);
        if (slot < 0) continue;
        fri_body_state *s = &w->state[slot];
        if (s->force.x != 0 || s->force.y != 0 || s->force.z != 0)
            fr_tree_add_ext_force(rb->data, i, s->pose.p, s->force);
        if (s->torque.x != 0 || s->torque.y != 0 || s->torque.z != 0)
            fr_tree_add_ext_torque(rb->data, i, s->torque);
    }
    memcpy(rb->data->qd, rb->qd_save, sizeof(double) * (size_t)fr_tree_nv(rb->tree));
    rb->data->gravity = w->def.gravity;
    /* (an iterated step leaves the kinematics at the start: they are reused below) */
    int err = npairs > 0 && !first_only && rb->data->integrator == FR_INTEGRATOR_EULER
                  ? fr_tree_step_no_kinematics(rb->tree, rb->data, h)
                  : fr_tree_step(rb->tree, rb->data, h);
    if (err) {
        fr_tree_forward_kinematics(rb->tree, rb->data);
        return robot_fault(w, rb, err);
    }
    w->stats.tree_steps++;
    return FR_OK;
}

static int robot_step_with_contacts(fr_world *w, int r)
{
    fri_robot *rb = &w->robots[r];
    const double h = w->h;
    const int nq = fr_tree_nq(rb->tree), nv = fr_tree_nv(rb->tree);
    const size_t qbytes = sizeof(double) * (size_t)nq, vbytes = sizeof(double) * (size_t)nv;
    memcpy(rb->q_save, rb->data->q, qbytes);
    memcpy(rb->qd_save, rb->data->qd, vbytes);
    const bool implicit = w->def.contact_implicit;
    const int max_it = w->def.implicit_iterations;
    int npairs = implicit ? start_link_forces(w, r) : 0;
    /* a step whose iteration does not settle is taken again linearised at the start alone (the
     * linearly implicit step: one ABA, stable for any stiffness) instead of at a last iterate
     * that may have run away */
    const bool euler = rb->data->integrator == FR_INTEGRATOR_EULER;
    bool first_only = false, revise = false;
    int nrev = 0;
    double dv_prev = 0.0; /* the last revision's change to the links' velocities, m/s */
    for (int it = 0;; it++) {
        /* data holds (q0, qd⁽ᵏ⁾) with its kinematics: the links' twists at the iterate, taken in
         * the start's configuration, as the contacts' Jacobians are */
        const bool revised = revise && revise_pass(w, r) == 0;
        if (revised) {
            w->stats.tree_revisions++;
            nrev++;
        } else {
            nrev = 0;
            int err = full_pass(w, r, it, npairs, first_only);
            if (err) return err;
        }
        if (npairs == 0) break;
        if (first_only) {
            link_responses_at_end(w, r);
            break;
        }
        /* the links' new twists in the start's configuration: J(q0)·qd⁺ */
        memcpy(rb->q_new, rb->data->q, qbytes);
        memcpy(rb->data->q, rb->q_save, qbytes);
        if (euler)
            fr_tree_velocities(rb->tree, rb->data);
        else
            fr_tree_forward_kinematics(rb->tree, rb->data);
        /* the contacts there: settled force iterates and unchanged states → done; the next
         * iteration may revise the tree's step while every contact keeps the state its tangent
         * was taken in (not with a free body that touches the link alone: that body follows the
         * link, its share of the tangent taken anew in each full pass) */
        bool done = true;
        /* only the iterates' last digits keep it from done: forces settled to LINK_SETTLED of
         * their size, no contact changing its state, the links' velocities to LINK_SETTLED_DV */
        bool settled = true;
        revise = w->def.revise_robots && euler && nrev < REVISE_MAX;
        for (int c = 0, l, other; c < w->ncontacts;) {
            bool is_a;
            fri_pair *p = next_link_pair(w, r, &c, &l, &other, &is_a);
            if (!p) break;
            double y[6];
            fr_contact_response chk;
            const fr_svec nul = link_nu(rb, w->model[l].link);
            fri_link_body_follow(w, p, other,
                                 fri_twist_at(nul, fr_v3_sub(p->model.point, w->state[l].pose.p)));
            link_pair_local(w, p, nul, other, is_a, y);
            fr_contact_respond(&p->model, y, h, p->mu, p->lam_link, p->nlag_link, 0u, &chk);
            /* (the normal force this response's friction limit was taken at) */
            const double nlag_used = p->nlag_link;
            fr_contact_response *rs = link_resp(w, p, other);
            /* the force iterate moves by less than a velocity change of the tolerance would */
            double m_red =
                fr_contact_reduced_mass(w->model[p->slot_a].mass, w->model[p->slot_b].mass);
            for (int q = 0; q < p->model.npts; q++) {
                double ftol = w->def.solver_tolerance * m_red / h + 1e-12 * chk.elastic[q];
                const double d = fabs(chk.elastic[q] - p->lam_link[q]);
                if (d > ftol) done = false;
                if (d > ftol && d > LINK_SETTLED * fmax(chk.normal, rs->normal)) settled = false;
            }
            if ((chk.normal > 0.0) != (rs->normal > 0.0) || chk.slip != rs->slip)
                done = settled = false;
            /* a slip whose friction turned round between two iterates ends inside the step: the
             * iterates took the slipping tangent (the friction's size fixed at μ·N) and swung
             * from side to side; taken with the sticking tangent, the link meets the other body
             * (a box landing spinning on the hexapod's back) */
            if (rs->slip && chk.slip && !p->restuck &&
                rs->z[0] * chk.z[0] + rs->z[1] * chk.z[1] + rs->z[2] * chk.z[2] < 0.0) {
                p->restuck = true;
                done = settled = false;
            }
            link_kinks(w, p, &chk, rs, m_red, &done, &settled);
            memcpy(p->lam_link, chk.elastic, sizeof p->lam_link);
            /* The friction limit μ·N is taken at the last iterate's N, so a slipping contact's N
             * converges linearly (its ratio set by how the friction force moves the links).
             * Aitken's Δ² extrapolates such a sequence to its limit: with a steady ratio r in
             * (0, 0.9) the next limit is taken there (measured on the walking hexapod: ~0.25). */
            double n1 = chk.normal, dn1 = n1 - p->nlag_link, dn0 = p->nlag_link - p->nlag_prev;
            p->nlag_prev = p->nlag_link;
            p->nlag_link = n1;
            if (it >= 1 && chk.slip && dn0 != 0.0) {
                double ratio = dn1 / dn0;
                if (ratio > 0.0 && ratio < 0.9) p->nlag_link = n1 + ratio / (1.0 - ratio) * dn1;
            }
            /* As in the free bodies' solve (solve.c): a bond at μ_s that slips by no more than the
             * solve's tolerance explains is held with a wider allowance, once; one that slips
             * beyond breaks away; a bond that slid at the start and whose friction turned
             * against its slip then (the slip reversed inside the step) sticks again under μ_s,
             * once (a robot's foot in a stick-slip rig slid back for 1.02 s instead of 0.33) */
            if (done && fri_pair_judge_slip(w, p, &chk, nlag_used)) done = revise = settled = false;
            if (p->link_alone || link_state(p, &chk) != p->link_lin) revise = false;
            /* A revised iteration converges to where its kept tangent S, not the contact's own,
             * meets the tree's S·J̇·q̇ term (docs/robots.md, "revised steps"): where a contact's
             * load changed by more than LINK_RETANGENT since S was taken (a foot coming down),
             * the tangent is taken anew before the step may stop (revised, the hexapod's step
             * stopped 5.7e-8 m/s off the Newton step's at τ = 1e-10 m/s, its r3 foot loaded from
             * 0.31 to 0.98 N within it) */
            if (revised &&
                fabs(chk.normal - p->link_nlin) > LINK_RETANGENT * fmax(chk.normal, p->link_nlin))
                done = revise = false;
        }
        /* A revised iteration converges linearly: its force iterates may settle before a
         * slip's direction and size do (a Go1's slipping foot stopped 6e-6 rad/s off the Newton
         * step). It also stops only once its change to the links' velocities, and the change
         * still to come at the rate of the last two (δ·ρ/(1 − ρ)), are within the tolerance, as
         * the free bodies' solve stops on their velocity corrections. */
        if (revised) {
            const double dv = rb->data->revised_dv, tol = w->def.solver_tolerance,
                         rho = nrev >= 2 && dv_prev > 0.0 ? dv / dv_prev : 0.0;
            if (!(dv <= tol && rho < 1.0 && dv * rho <= tol * (1.0 - rho))) done = false;
            if (!(dv <= LINK_SETTLED_DV)) settled = false;
            dv_prev = dv;
        }
        if (!done && it + 1 < max_it) continue;
        /* Out of iterations with the iterates settled (a slipping contact's slow linear
         * convergence, a box's torso sliding after a fall: the forces still moved by 1e-9 of
         * their size at the 100th iteration): the last iterate is the step, counted as
         * unconverged; the fallback below, one linearised pass from the start, gained 1.95 J in
         * that tick. */
        if (!done && settled) {
            w->stats.unconverged++;
            done = true;
        }
        if (!done) {
            w->stats.unconverged++;
            start_link_forces(w, r);
            first_only = true;
            revise = false;
            it = -1; /* the next pass is the first one again, and the last */
            continue;
        }
        /* the step taken: back to its configuration */
        memcpy(rb->data->q, rb->q_new, qbytes);
        fr_tree_forward_kinematics(rb->tree, rb->data);
        break;
    }
    /* absurd joint speeds: a divergence that has not reached NaN yet */
    const fr_tree *t = rb->tree;
    for (int i = 0; i < rb->nlinks; i++) {
        const fr_link_def *ld = fr_tree_link_def(t, i);
        if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) continue;
        double qd = rb->data->qd[fr_tree_link_v_index(t, i)];
        if (!(fabs(qd) <= FR_WORLD_MAX_JOINT_SPEED)) {
            rb->data->fault_link = i;
            return robot_fault(w, rb, FR_ERR_RANGE);
        }
    }
    return FR_OK;
}

/* How many pairs that hold it each body in the step's contacts is in: one pass (a count per
 * link pair over all contacts was O(pairs × contacts) in every tree step). */
static void count_touching(fr_world *w)
{
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        w->touching[p->slot_a] = w->touching[p->slot_b] = 0;
    }
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (pair_holds(w, p)) w->touching[p->slot_a]++, w->touching[p->slot_b]++;
    }
}

int fri_world_robots_step(fr_world *w)
{
    if (w->nrobots > 0) count_touching(w);
    /* (while the world settles, a robot fixed to the world stands still, its controller too) */
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        /* once a tick: its targets hold over the tick's substeps */
        if (rb->ctl && w->sub_k == 0 && !(w->settling && rb->settle_frozen))
            rb->ctl(w, r, rb->ctl_user);
    }
    for (int r = 0; r < w->nrobots; r++) {
        if (w->settling && w->robots[r].settle_frozen) continue;
        int err = robot_step_with_contacts(w, r);
        if (err) return err;
    }
    return FR_OK;
}

void fr_world_get_counters(const fr_world *w, fr_world_counters *out)
{
    memset(out, 0, sizeof *out);
    for (int r = 0; r < w->nrobots; r++) {
        out->velocity_limited += w->robots[r].data->velocity_limited;
        out->mimic_singular += w->robots[r].data->mimic_singular;
    }
}

void fri_world_robots_sync(fr_world *w)
{
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        /* fr_tree_step leaves the link poses and twists of the new state in data */
        for (int i = 0; i < rb->nlinks; i++) sync_link(w, rb, i);
    }
}

/* A landing found late on a link (late.c): the tree's inverse mass at x on link body
 * `slot`, J·M⁻¹·Jᵀ (1/kg, world axes), with the joint velocities a unit impulse along each axis
 * there makes kept in the robot's scratch for fri_link_push. */
fr_mat3 fri_link_inv_mass(fr_world *w, int slot, fr_vec3 x)
{
    fri_robot *rb = &w->robots[w->model[slot].robot];
    const int nv = fr_tree_nv(rb->tree);
    double *J = rb->lbuf, *p = rb->lbuf + 3 * (size_t)nv;
    fr_tree_point_jacobian(rb->tree, rb->data, w->model[slot].link, x, NULL, J);
    fr_tree_response_prepare(rb->tree, rb->data, false);
    rb->resp_stamp = UINT64_MAX; /* (the step's effective masses are formed again) */
    fr_mat3 K = fr_m3_zero();
    for (int k = 0; k < 3; k++) {
        double *dqd = rb->lbuf + (4 + (size_t)k) * (size_t)nv;
        for (int v = 0; v < nv; v++) p[v] = J[(size_t)k * (size_t)nv + (size_t)v];
        fr_tree_impulse_response(rb->tree, rb->data, p, dqd);
        for (int i = 0; i < 3; i++) {
            double e = 0.0;
            for (int v = 0; v < nv; v++) e += J[(size_t)i * (size_t)nv + (size_t)v] * dqd[v];
            K.m[i][k] = e;
        }
    }
    return K;
}

/* The impulse P (N·s, world) at the point of the last fri_link_inv_mass on that link's tree */
void fri_link_push(fr_world *w, int slot, fr_vec3 P)
{
    fri_robot *rb = &w->robots[w->model[slot].robot];
    const int nv = fr_tree_nv(rb->tree);
    const double c[3] = {P.x, P.y, P.z};
    for (int k = 0; k < 3; k++) {
        const double *dqd = rb->lbuf + (4 + (size_t)k) * (size_t)nv;
        for (int v = 0; v < nv; v++) rb->data->qd[v] += c[k] * dqd[v];
    }
    fr_tree_velocities(rb->tree, rb->data);
    for (int i = 0; i < rb->nlinks; i++) sync_link(w, rb, i);
}

/* The energy of link body `slot`'s robot, J: kinetic (its rotors' too), gravity's and its soft
 * limits', less the work its motors (not its limits or dampers) did over the step when `step`
 * (as fri_world_energy_end books it) */
double fri_link_robot_energy(const fr_world *w, int slot, bool step)
{
    const fri_robot *rb = &w->robots[w->model[slot].robot];
    double e =
        fr_tree_kinetic_energy(rb->tree, rb->data) + fr_tree_rotor_energy(rb->tree, rb->data) +
        fr_tree_potential_energy(rb->tree, rb->data) + fr_tree_limit_energy(rb->tree, rb->data);
    if (step)
        for (int v = 0; v < fr_tree_nv(rb->tree); v++)
            e -= 0.5 * w->h *
                 (rb->data->tau_out[v] - rb->data->tau_limit[v] - rb->data->tau_damper[v]) *
                 (rb->qd_save[v] + rb->data->qd[v]);
    return e;
}
