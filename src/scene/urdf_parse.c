/* URDF elements → raw links, joints and transmissions, in document order. A bad value is
 * reported and parsing goes on, so one run reports every error of a file; what can be repaired is
 * repaired with a warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_internal.h"

void fri_urdf_free_collision(fr_urdf_collision *c)
{
    free((void *)c->points);
    free((void *)c->mesh_path);
    c->points = NULL;
    c->mesh_path = NULL;
}

/* ---------------------------------------------------------------- geometry */

static int parse_geometry(fri_urdf_parser *p, const xmlNode *col, fr_urdf_collision *c)
{
    xmlNode *g;
    int err = fri_single_child(p, col, "geometry", &g);
    if (!g)
        return err ? err
                   : fri_urdf_err(p, col, NULL, FR_ERR_PARSE, "<collision> needs a <geometry>");
    xmlNode *shape = NULL;
    for (xmlNode *k = g->children; k; k = k->next) {
        if (k->type != XML_ELEMENT_NODE) continue;
        if (shape)
            return fri_urdf_err(p, k, NULL, FR_ERR_PARSE, "<geometry> must hold exactly one shape");
        shape = k;
    }
    if (!shape)
        return fri_urdf_err(p, g, NULL, FR_ERR_PARSE,
                            "<geometry> is empty (expected <box>, <sphere>, <cylinder>, <capsule> "
                            "or <mesh>)");
    if (fri_is_elem(shape, "box")) {
        c->type = FR_URDF_BOX;
        if ((err = fri_attr_vec3(p, shape, "size", true, fr_v3_zero(), &c->size))) return err;
        if (!(c->size.x > 0 && c->size.y > 0 && c->size.z > 0))
            return fri_urdf_err(p, shape, "size", FR_ERR_RANGE,
                                "box sizes must be > 0, got %g %g %g", c->size.x, c->size.y,
                                c->size.z);
    } else if (fri_is_elem(shape, "sphere")) {
        c->type = FR_URDF_SPHERE;
        return fri_attr_double(p, shape, "radius", true, 0, FRI_POSITIVE, &c->radius);
    } else if (fri_is_elem(shape, "cylinder") || fri_is_elem(shape, "capsule")) {
        c->type = fri_is_elem(shape, "cylinder") ? FR_URDF_CYLINDER : FR_URDF_CAPSULE;
        int e1 = fri_attr_double(p, shape, "radius", true, 0, FRI_POSITIVE, &c->radius);
        int e2 = fri_attr_double(p, shape, "length", true, 0, FRI_POSITIVE, &c->length);
        return e1 ? e1 : e2;
    } else if (fri_is_elem(shape, "mesh")) {
        c->type = FR_URDF_MESH;
        return fri_urdf_parse_mesh(p, shape, c);
    } else {
        return fri_urdf_err(p, shape, NULL, FR_ERR_PARSE,
                            "unknown geometry <%s> (expected box, sphere, cylinder, capsule or "
                            "mesh)",
                            (const char *)shape->name);
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- links */

static int parse_inertial(fri_urdf_parser *p, xmlNode *in, fri_raw_link *rl)
{
    fr_pose o;
    int err = fri_parse_origin(p, in, &o);
    xmlNode *mn, *inn;
    int e = fri_single_child(p, in, "mass", &mn);
    err = err ? err : e;
    if (!mn) {
        e = fri_urdf_err(p, in, NULL, FR_ERR_PARSE, "<inertial> needs a <mass>");
        err = err ? err : e;
    } else if (!(e = fri_attr_double(p, mn, "value", true, 0, FRI_ANY, &rl->l.mass))) {
        if (!(rl->l.mass >= 0)) {
            e = fri_urdf_err(p, mn, "value", FR_ERR_RANGE, "mass must be >= 0 kg, got %g",
                             rl->l.mass);
            rl->l.mass = 0;
        }
    }
    err = err ? err : e;
    bool mass_ok = !err;
    e = fri_single_child(p, in, "inertia", &inn);
    err = err ? err : e;
    if (!inn) {
        e = fri_urdf_err(p, in, NULL, FR_ERR_PARSE, "<inertial> needs an <inertia>");
        return err ? err : e;
    }
    static const char *const keys[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
    double v[6];
    int ebad = 0;
    for (int k = 0; k < 6; k++) {
        e = fri_attr_double(p, inn, keys[k], true, 0, FRI_ANY, &v[k]);
        ebad = ebad ? ebad : e;
    }
    if (ebad) return err ? err : ebad;
    fr_mat3 I = {{{v[0], v[1], v[2]}, {v[1], v[3], v[4]}, {v[2], v[4], v[5]}}};
    if (mass_ok) fri_urdf_check_inertia(p, inn, &I, rl->l.mass);
    /* the tensor is given in the inertial frame: rotate it into link axes */
    rl->l.inertia = fr_m3_rotate(fr_q_to_m3(o.q), I);
    rl->l.com = o.p;
    return err;
}

static int parse_link(fri_urdf_parser *p, xmlNode *n, fri_raw_link *rl)
{
    memset(rl, 0, sizeof *rl);
    rl->node = n;
    rl->parent_joint = -1;
    rl->tree_index = -1;
    rl->l.line = (int)xmlGetLineNo(n);
    rl->l.inertia = fr_m3_zero();
    char *name;
    int err = fri_required_str(p, n, "name", &name);
    if (err) return err;
    rl->l.name = name;
    xmlNode *in;
    int e = fri_single_child(p, n, "inertial", &in);
    err = err ? err : e;
    if (in) {
        rl->inertial_node = in;
        e = parse_inertial(p, in, rl);
        err = err ? err : e;
    }
    int nc;
    fri_child_elem(n, "collision", &nc);
    if (nc > 0) {
        rl->cols = calloc((size_t)nc, sizeof *rl->cols);
        rl->col_mesh = calloc((size_t)nc, sizeof *rl->col_mesh);
        if (!rl->cols || !rl->col_mesh) return FR_ERR_NOMEM;
    }
    for (xmlNode *k = n->children; k; k = k->next) {
        if (k->type != XML_ELEMENT_NODE) continue;
        if (!fri_is_elem(k, "collision")) {
            if (!fri_is_elem(k, "visual") && !fri_is_elem(k, "inertial")) fri_urdf_unknown(p, k);
            continue;
        }
        fr_urdf_collision *c = &rl->cols[rl->l.ncollisions];
        memset(c, 0, sizeof *c);
        c->line = (int)xmlGetLineNo(k);
        int e1 = fri_parse_origin(p, k, &c->origin);
        int e2 = parse_geometry(p, k, c);
        if (e1 || e2) {
            fri_urdf_free_collision(c);
            err = err ? err : e1 ? e1 : e2;
            continue;
        }
        if (c->type == FR_URDF_MESH) /* (for the units' check, once every link is read) */
            for (xmlNode *g = k->children; g && !rl->col_mesh[rl->l.ncollisions]; g = g->next)
                for (xmlNode *m = fri_is_elem(g, "geometry") ? g->children : NULL; m; m = m->next)
                    if (fri_is_elem(m, "mesh")) rl->col_mesh[rl->l.ncollisions] = m;
        rl->l.ncollisions++;
    }
    rl->l.collisions = rl->cols;
    return err;
}

/* ---------------------------------------------------------------- joints */

static const char *const joint_types[] = {"fixed",     "revolute", "continuous",
                                          "prismatic", "floating", NULL};

static int parse_limit(fri_urdf_parser *p, xmlNode *ln, fri_raw_joint *rj, bool ranged)
{
    fr_urdf_joint *j = &rj->j;
    j->has_limit = true;
    rj->limit_node = ln;
    int err = FR_OK, e;
    if (!xmlHasProp(ln, (const xmlChar *)"effort"))
        fri_urdf_warn(p, ln, NULL, "<limit> of joint '%s' has no effort: the motor is unlimited",
                      j->name);
    else if ((e = fri_attr_double(p, ln, "effort", true, 0, FRI_NONNEG, &j->effort)))
        err = e;
    if (!xmlHasProp(ln, (const xmlChar *)"velocity"))
        fri_urdf_warn(p, ln, NULL,
                      "<limit> of joint '%s' has no velocity: the motor's speed is unlimited",
                      j->name);
    else if ((e = fri_attr_double(p, ln, "velocity", true, 0, FRI_NONNEG, &j->velocity)))
        err = err ? err : e;
    if (!ranged) return err;
    bool has_lo = xmlHasProp(ln, (const xmlChar *)"lower") != NULL;
    bool has_hi = xmlHasProp(ln, (const xmlChar *)"upper") != NULL;
    if (!has_lo && !has_hi) {
        fri_urdf_warn(p, ln, NULL,
                      "<limit> of %s joint '%s' has neither lower nor upper: read as unlimited",
                      joint_types[j->type], j->name);
        j->type = j->type == FR_URDF_REVOLUTE ? FR_URDF_CONTINUOUS : j->type;
        j->lower = -INFINITY;
        j->upper = INFINITY;
        return err;
    }
    int e1 = fri_attr_double(p, ln, "lower", false, 0, FRI_ANY, &j->lower);
    int e2 = fri_attr_double(p, ln, "upper", false, 0, FRI_ANY, &j->upper);
    if (e1 || e2) return err ? err : e1 ? e1 : e2;
    if (j->lower > j->upper)
        return fri_urdf_err(p, ln, "upper", FR_ERR_RANGE, "upper (%g) is below lower (%g)",
                            j->upper, j->lower);
    if (!(0 >= j->lower && 0 <= j->upper)) {
        j->q_init = 0 < j->lower ? j->lower : j->upper;
        fri_urdf_warn(p, ln, NULL,
                      "joint '%s': its zero position is outside its limits [%g, %g]; where no "
                      "initial position is given for it, it starts at %g",
                      j->name, j->lower, j->upper, j->q_init);
    }
    return err;
}

static int parse_joint(fri_urdf_parser *p, xmlNode *n, fri_raw_joint *rj)
{
    memset(rj, 0, sizeof *rj);
    rj->node = n;
    fr_urdf_joint *j = &rj->j;
    j->line = (int)xmlGetLineNo(n);
    j->effort = j->velocity = INFINITY;
    j->lower = -INFINITY;
    j->upper = INFINITY;
    j->axis = fr_v3(1, 0, 0);
    j->mimic = -1;
    j->mimic_multiplier = 1;
    j->reduction = 1;
    char *name, *type;
    int err = fri_required_str(p, n, "name", &name), e;
    if (err) return err;
    j->name = name;
    int t = -1;
    if ((e = fri_required_str(p, n, "type", &type))) {
        err = e;
    } else {
        for (int k = 0; joint_types[k]; k++)
            if (!strcmp(type, joint_types[k])) t = k;
        if (t < 0)
            err = !strcmp(type, "planar")
                      ? fri_urdf_err(p, n, "type", FR_ERR_UNSUPPORTED,
                                     "planar joints are not supported (use two prismatic and one "
                                     "revolute joint)")
                      : fri_urdf_err(p, n, "type", FR_ERR_PARSE,
                                     "unknown joint type '%s' (expected revolute, continuous, "
                                     "prismatic, fixed or floating)",
                                     type);
        free(type);
    }
    j->type = t < 0 ? FR_URDF_FIXED : (fr_urdf_joint_type)t;
    if ((e = fri_parse_origin(p, n, &j->origin))) err = err ? err : e;
    xmlNode *pn, *cn, *an, *ln, *dn, *mn;
    if ((e = fri_single_child(p, n, "parent", &pn))) err = err ? err : e;
    if (!pn)
        e = fri_urdf_err(p, n, NULL, FR_ERR_PARSE, "joint '%s' needs a <parent link=...>", name);
    else
        e = fri_required_str(p, pn, "link", &rj->parent_name);
    err = err ? err : e;
    rj->parent_node = pn;
    if ((e = fri_single_child(p, n, "child", &cn))) err = err ? err : e;
    if (!cn)
        e = fri_urdf_err(p, n, NULL, FR_ERR_PARSE, "joint '%s' needs a <child link=...>", name);
    else
        e = fri_required_str(p, cn, "link", &rj->child_name);
    err = err ? err : e;
    rj->child_node = cn;
    bool moving = j->type != FR_URDF_FIXED && j->type != FR_URDF_FLOATING;
    bool ranged = j->type == FR_URDF_REVOLUTE || j->type == FR_URDF_PRISMATIC;
    if ((e = fri_single_child(p, n, "axis", &an))) err = err ? err : e;
    if (an && moving && !(e = fri_attr_vec3(p, an, "xyz", true, fr_v3(1, 0, 0), &j->axis))) {
        double len = fr_v3_norm(j->axis);
        if (!(len > 1e-9))
            e = fri_urdf_err(p, an, "xyz", FR_ERR_RANGE, "axis must not be zero");
        else
            j->axis = fr_v3_scale(j->axis, 1.0 / len);
    }
    err = err ? err : e;
    if ((e = fri_single_child(p, n, "limit", &ln))) err = err ? err : e;
    if (ranged && !ln && t >= 0) {
        fri_urdf_warn(p, n, NULL, "%s joint '%s' has no <limit>: read as unlimited", joint_types[t],
                      name);
        if (j->type == FR_URDF_REVOLUTE) j->type = FR_URDF_CONTINUOUS;
    }
    if (ln && moving && (e = parse_limit(p, ln, rj, ranged))) err = err ? err : e;
    if ((e = fri_single_child(p, n, "dynamics", &dn))) err = err ? err : e;
    if (dn) {
        int e1 = fri_attr_double(p, dn, "damping", false, 0, FRI_NONNEG, &j->damping);
        int e2 = fri_attr_double(p, dn, "friction", false, 0, FRI_NONNEG, &j->friction);
        err = err ? err : e1 ? e1 : e2;
    }
    if ((e = fri_single_child(p, n, "mimic", &mn))) err = err ? err : e;
    if (mn) {
        rj->mimic_node = mn;
        int e1 = fri_required_str(p, mn, "joint", &rj->mimic_name);
        int e2 = fri_attr_double(p, mn, "multiplier", false, 1, FRI_ANY, &j->mimic_multiplier);
        int e3 = fri_attr_double(p, mn, "offset", false, 0, FRI_ANY, &j->mimic_offset);
        err = err ? err : e1 ? e1 : e2 ? e2 : e3;
        if (!e1 && j->type == FR_URDF_FIXED && t >= 0) {
            /* a joint made fixed that kept its <mimic> (talos_reduced.urdf's gripper): urdfdom
             * reads <mimic> on any joint and ROS ignores it on a fixed one; nothing to follow */
            fri_urdf_warn(p, mn, NULL,
                          "fixed joint '%s' has no coordinate to follow '%s' with: <mimic> ignored",
                          name, rj->mimic_name);
            free(rj->mimic_name);
            rj->mimic_name = NULL;
            j->mimic_multiplier = 1;
            j->mimic_offset = 0;
        } else if (!e1 && !moving) {
            e1 =
                fri_urdf_err(p, mn, NULL, FR_ERR_PARSE,
                             "a %s joint cannot <mimic> (only 1-DOF joints)", joint_types[j->type]);
        }
        err = err ? err : e1;
    }
    /* A motor of no effort is what the file says, but no controller can then move or hold the
     * joint: Romeo's hands (effort="0") hung from a PD posture without a word. A <mimic>
     * follower needs no motor: the constraint drives it. (velocity="0" is read as no speed
     * limit, urdf.c.) */
    if (ln && moving && !rj->mimic_name && j->effort == 0.0)
        fri_urdf_warn(p, ln, "effort",
                      "joint '%s' has a motor of effort 0: no controller can move or hold it "
                      "(read as given: only gravity, contacts and its limits move it)",
                      name);
    for (xmlNode *k = n->children; k; k = k->next) {
        static const char *const known[] = {"origin",      "parent",   "child", "axis",
                                            "limit",       "dynamics", "mimic", "safety_controller",
                                            "calibration", NULL};
        if (k->type != XML_ELEMENT_NODE) continue;
        bool ok = false;
        for (int i = 0; known[i]; i++) ok = ok || fri_is_elem(k, known[i]);
        if (!ok) fri_urdf_unknown(p, k);
    }
    return err;
}

/* ---------------------------------------------------------------- transmissions */

/* ROS 1 (<actuator><mechanicalReduction>, or <mechanicalReduction> directly, PR2 style) and ROS 2
 * (<mechanical_reduction> in <joint> or <actuator>); one record per driven joint. */
static int parse_transmission(fri_urdf_parser *p, xmlNode *n, fri_raw_trans **tr, int *ntr,
                              int *cap)
{
    double red = 1;
    char *actuator = NULL;
    int err = FR_OK;
    for (xmlNode *k = n->children; k; k = k->next) {
        if (fri_is_elem(k, "mechanicalReduction") || fri_is_elem(k, "mechanical_reduction"))
            err = err ? err : fri_text_double(p, k, &red);
        if (fri_is_elem(k, "actuator")) {
            if (!actuator) actuator = fri_attr_str(k, "name");
            for (xmlNode *a = k->children; a; a = a->next)
                if (fri_is_elem(a, "mechanicalReduction") || fri_is_elem(a, "mechanical_reduction"))
                    err = err ? err : fri_text_double(p, a, &red);
        }
    }
    for (xmlNode *k = n->children; k; k = k->next) {
        if (!fri_is_elem(k, "joint")) continue;
        double jr = red;
        for (xmlNode *a = k->children; a; a = a->next)
            if (fri_is_elem(a, "mechanical_reduction"))
                err = err ? err : fri_text_double(p, a, &jr);
        char *jn = fri_attr_str(k, "name");
        if (!jn) {
            fri_urdf_warn(p, k, "name", "a <joint> of a <transmission> without a name: ignored");
            continue;
        }
        if (*ntr == *cap) {
            int c = *cap ? 2 * *cap : 16;
            fri_raw_trans *t = realloc(*tr, sizeof *t * (size_t)c);
            if (!t) {
                free(jn);
                free(actuator);
                return FR_ERR_NOMEM;
            }
            *tr = t;
            *cap = c;
        }
        fri_raw_trans *t = &(*tr)[(*ntr)++];
        t->joint = jn;
        t->actuator = actuator ? strdup(actuator) : NULL;
        t->reduction = jr;
        t->node = n;
        t->joint_node = k;
    }
    free(actuator);
    return err;
}

/* ---------------------------------------------------------------- the document */

static int find_raw_link(const fri_raw_link *rl, int nl, const char *name)
{
    for (int i = 0; i < nl; i++)
        if (rl[i].l.name && !strcmp(rl[i].l.name, name)) return i;
    return -1;
}

int fri_urdf_parse_doc(fri_urdf_parser *p, xmlDoc *doc, fr_urdf **out)
{
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!fri_is_elem(root, "robot"))
        return fri_urdf_err(p, root, NULL, FR_ERR_PARSE,
                            "the root element must be <robot>, got <%s>",
                            root ? (const char *)root->name : "nothing");
    char *rname = NULL;
    fri_required_str(p, root, "name", &rname);
    int nl = 0, nj = 0;
    for (xmlNode *k = root->children; k; k = k->next) {
        nl += fri_is_elem(k, "link");
        nj += fri_is_elem(k, "joint");
    }
    fri_raw_link *rl = calloc((size_t)nl + 1, sizeof *rl);
    fri_raw_joint *rj = calloc((size_t)nj + 1, sizeof *rj);
    fri_raw_trans *tr = NULL;
    int ntr = 0, cap_tr = 0, il = 0, ij = 0, err = FR_OK;
    if (!rl || !rj) err = FR_ERR_NOMEM;
    for (xmlNode *k = root->children; k && err != FR_ERR_NOMEM; k = k->next) {
        if (k->type != XML_ELEMENT_NODE) continue;
        if (fri_is_elem(k, "link")) {
            fri_raw_link *L = &rl[il++];
            if (parse_link(p, k, L) == FR_ERR_NOMEM) err = FR_ERR_NOMEM;
            if (!L->l.name) {
                L->bad = true;
                continue;
            }
            int first = find_raw_link(rl, il - 1, L->l.name);
            if (first >= 0) {
                fri_urdf_err(p, k, "name", FR_ERR_PARSE,
                             "duplicate link name '%s' (the first is on line %d)", L->l.name,
                             rl[first].l.line);
                free((char *)L->l.name);
                L->l.name = NULL; /* the first one stands */
                L->bad = true;
            }
        } else if (fri_is_elem(k, "joint")) {
            fri_raw_joint *J = &rj[ij++];
            if (parse_joint(p, k, J) == FR_ERR_NOMEM) err = FR_ERR_NOMEM;
            for (int q = 0; J->j.name && q < ij - 1; q++)
                if (rj[q].j.name && !strcmp(rj[q].j.name, J->j.name)) {
                    fri_urdf_err(p, k, "name", FR_ERR_PARSE,
                                 "duplicate joint name '%s' (the first is on line %d)", J->j.name,
                                 rj[q].j.line);
                    J->bad = true;
                    break;
                }
        } else if (fri_is_elem(k, "transmission")) {
            if (parse_transmission(p, k, &tr, &ntr, &cap_tr) == FR_ERR_NOMEM) err = FR_ERR_NOMEM;
        } else if (!fri_is_elem(k, "material") && !fri_is_elem(k, "gazebo")) {
            fri_urdf_unknown(p, k);
        }
    }
    if (err) {
        fri_urdf_free_raw(rl, il, rj, ij, tr, ntr);
        free(rname);
        return err;
    }
    if (nl == 0) fri_urdf_err(p, root, NULL, FR_ERR_PARSE, "the robot has no <link>");
    fri_urdf_mesh_units(p, rl, il);
    return fri_urdf_assemble(p, root, rname, rl, nl, rj, nj, tr, ntr, out);
}
