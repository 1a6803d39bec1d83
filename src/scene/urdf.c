/* URDF files → a validated, repaired robot description (links in tree order, joints, collision
 * geometry) and from it an articulated tree. The public API; parsing, repairs and meshes live in
 * urdf_xml.c, urdf_parse.c, urdf_repair.c and urdf_mesh.c. Start-up only. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "files.h"
#include "urdf_internal.h"

fr_urdf_opts fr_urdf_opts_default(void)
{
    return (fr_urdf_opts){
        .package_paths = NULL,
        .npackage_paths = 0,
        .ros_package_path = true,
        .strict = false,
        .merge_fixed = true,
        .hull_vertices = FR_URDF_HULL_VERTICES,
        .armature = 0,
        .fixed_base = false,
        .diags = NULL,
    };
}

/* The first XML error (libxml2 reports several; the first is the cause). */
typedef struct xml_first_error {
    bool set;
    int line, col;
    char msg[300];
} xml_first_error;

static void xml_error_cb(void *user, xmlErrorPtr e)
{
    xml_first_error *f = user;
    if (f->set || !e || e->level < XML_ERR_ERROR) return;
    f->set = true;
    f->line = e->line;
    f->col = e->int2;
    snprintf(f->msg, sizeof f->msg, "%s", e->message ? e->message : "malformed XML");
    size_t n = strlen(f->msg);
    while (n > 0 && (f->msg[n - 1] == '\n' || f->msg[n - 1] == ' ')) f->msg[--n] = 0;
}

static int load(const char *text, size_t len, const char *name, const char *dir,
                const fr_urdf_opts *o, fr_urdf **out, fr_diag *d)
{
    fr_urdf_opts def = fr_urdf_opts_default();
    if (!o) o = &def;
    *out = NULL;
    fri_urdf_parser p = {.file = name, .dir = dir, .text = text, .len = len, .o = o};
    fr_diag_list_init(&p.diags);
    int err;
    xmlParserCtxtPtr ctx = xmlNewParserCtxt();
    if (!ctx) return FR_ERR_NOMEM;
    xml_first_error first = {0};
    /* libxml2's error hook is per thread; set it only around this parse */
    xmlSetStructuredErrorFunc(&first, xml_error_cb);
    xmlDoc *doc = xmlCtxtReadMemory(ctx, text, (int)len, name, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                        XML_PARSE_BIG_LINES);
    xmlSetStructuredErrorFunc(NULL, NULL);
    if (!doc) {
        fr_diag e;
        err = fr_diag_set(&e, FR_ERR_PARSE, name, first.set ? first.line : 0,
                          first.set ? first.col : 0, "", "malformed XML: %s",
                          first.set ? first.msg : "cannot parse");
        fr_diag_list_add(&p.diags, &e);
        p.first_error = e;
        p.nerrors = 1;
    } else {
        err = fri_urdf_parse_doc(&p, doc, out);
        xmlFreeDoc(doc);
    }
    xmlFreeParserCtxt(ctx);
    fri_urdf_flush_unknown(&p);
    if (!err && p.nerrors) {
        /* a warning under --strict (found after the robot was built) */
        err = FR_ERR_PARSE;
        fr_urdf_destroy(*out);
        *out = NULL;
    }
    if (d) {
        if (err && p.nerrors)
            *d = p.first_error;
        else if (err)
            fr_diag_set(d, err, name, 0, 0, "", "%s", fr_strerror(err));
        else
            memset(d, 0, sizeof *d);
    }
    for (int i = 0; o->diags && i < p.diags.n; i++) fr_diag_list_add(o->diags, &p.diags.items[i]);
    fr_diag_list_free(&p.diags);
    return err;
}

int fr_urdf_load_text(const char *xml, const char *name, const char *base_dir,
                      const fr_urdf_opts *o, fr_urdf **out, fr_diag *d)
{
    if (!xml || !out) return FR_ERR_INVAL;
    return load(xml, strlen(xml), name ? name : "<string>", base_dir ? base_dir : ".", o, out, d);
}

int fr_urdf_load_string(const char *xml, const char *name, const char *base_dir, fr_urdf **out,
                        fr_diag *d)
{
    return fr_urdf_load_text(xml, name, base_dir, NULL, out, d);
}

int fr_urdf_load(const char *path, const fr_urdf_opts *o, fr_urdf **out, fr_diag *d)
{
    fr_diag scratch;
    if (!d) d = &scratch;
    if (!path || !out) return FR_ERR_INVAL;
    *out = NULL;
    char *text = NULL, msg[256];
    size_t len = 0;
    int rerr = fri_read_input(path, FRI_MAX_URDF_BYTES, &text, &len, msg, sizeof msg);
    if (rerr) {
        int err = fr_diag_set(d, rerr, path, 0, 0, "", "URDF file: %s", msg);
        if (o && o->diags) fr_diag_list_add(o->diags, d);
        return err;
    }
    text[len] = 0;
    char *dcopy = strdup(path);
    if (!dcopy) {
        free(text);
        return fr_diag_set(d, FR_ERR_NOMEM, path, 0, 0, "", "out of memory");
    }
    int err = load(text, len, path, dirname(dcopy), o, out, d);
    free(dcopy);
    free(text);
    return err;
}

int fr_urdf_load_file(const char *path, fr_urdf **out, fr_diag *d)
{
    return fr_urdf_load(path, NULL, out, d);
}

void fr_urdf_destroy(fr_urdf *u)
{
    if (!u) return;
    for (int i = 0; i < u->nlinks; i++) {
        free((char *)u->links[i].name);
        for (int k = 0; k < u->links[i].ncollisions; k++)
            fri_urdf_free_collision((fr_urdf_collision *)&u->links[i].collisions[k]);
        free((void *)u->links[i].collisions);
        if (u->has_joint && u->has_joint[i]) {
            free((char *)u->joints[i].name);
            free((char *)u->joints[i].actuator);
        }
    }
    for (int i = 0; i < u->nframes; i++) free((char *)u->frames[i].name);
    free(u->frames);
    free(u->links);
    free(u->joints);
    free(u->has_joint);
    free(u->name);
    free(u);
}

const char *fr_urdf_name(const fr_urdf *u)
{
    return u->name;
}
int fr_urdf_link_count(const fr_urdf *u)
{
    return u->nlinks;
}
const fr_urdf_link *fr_urdf_link_at(const fr_urdf *u, int i)
{
    return i >= 0 && i < u->nlinks ? &u->links[i] : NULL;
}
const fr_urdf_joint *fr_urdf_joint_at(const fr_urdf *u, int i)
{
    return i >= 0 && i < u->nlinks && u->has_joint[i] ? &u->joints[i] : NULL;
}
int fr_urdf_link_find(const fr_urdf *u, const char *name)
{
    for (int i = 0; i < u->nlinks; i++)
        if (!strcmp(u->links[i].name, name)) return i;
    return -1;
}
int fr_urdf_joint_find(const fr_urdf *u, const char *name)
{
    for (int i = 0; i < u->nlinks; i++)
        if (u->has_joint[i] && !strcmp(u->joints[i].name, name)) return i;
    return -1;
}

int fr_urdf_dof(const fr_urdf *u)
{
    int n = 0;
    for (int i = 0; i < u->nlinks; i++) {
        if (!u->has_joint[i]) continue;
        switch (u->joints[i].type) {
        case FR_URDF_FIXED:
            break;
        case FR_URDF_FLOATING:
            n += 6;
            break;
        default:
            n += 1;
        }
    }
    return n;
}

int fr_urdf_frame_count(const fr_urdf *u)
{
    return u->nframes;
}
const fr_urdf_frame *fr_urdf_frame_at(const fr_urdf *u, int i)
{
    return i >= 0 && i < u->nframes ? &u->frames[i] : NULL;
}
int fr_urdf_frame_find(const fr_urdf *u, const char *name, fr_pose *pose)
{
    int i = fr_urdf_link_find(u, name);
    if (i >= 0) {
        if (pose) *pose = fr_pose_identity();
        return i;
    }
    for (int k = 0; k < u->nframes; k++)
        if (!strcmp(u->frames[k].name, name)) {
            if (pose) *pose = u->frames[k].pose;
            return u->frames[k].link;
        }
    return -1;
}

/* ---------------------------------------------------------------- tree */

fr_urdf_tree_opts fr_urdf_tree_opts_default(void)
{
    fr_urdf_tree_opts o;
    memset(&o, 0, sizeof o);
    o.base = fr_pose_identity();
    o.velocity_limits = true;
    return o;
}

int fr_urdf_build_tree(const fr_urdf *u, const fr_urdf_tree_opts *o, fr_tree **out, int *bad_q0)
{
    fr_urdf_tree_opts def = fr_urdf_tree_opts_default();
    if (!o) o = &def;
    *out = NULL;
    for (int k = 0; k < o->nq0; k++) {
        int i = fr_urdf_joint_find(u, o->q0_names[k]);
        if (i < 0 || u->joints[i].type == FR_URDF_FIXED || u->joints[i].type == FR_URDF_FLOATING) {
            if (bad_q0) *bad_q0 = k;
            return FR_ERR_NOTFOUND;
        }
        const fr_urdf_joint *j = &u->joints[i];
        bool ranged = j->type == FR_URDF_REVOLUTE || j->type == FR_URDF_PRISMATIC;
        if (!isfinite(o->q0_values[k]) ||
            (ranged && (o->q0_values[k] < j->lower || o->q0_values[k] > j->upper))) {
            if (bad_q0) *bad_q0 = k;
            return FR_ERR_RANGE;
        }
    }
    fr_tree *t = fr_tree_create();
    if (!t) return FR_ERR_NOMEM;
    char root_joint[256];
    int err = FR_OK;
    for (int i = 0; i < u->nlinks && !err; i++) {
        const fr_urdf_link *L = &u->links[i];
        fr_link_def ld = fr_link_def_default();
        ld.name = L->name;
        ld.mass = L->mass;
        ld.com = L->com;
        ld.inertia = L->inertia;
        if (!u->has_joint[i]) {
            snprintf(root_joint, sizeof root_joint, "%s_root", L->name);
            ld.joint_name = root_joint;
            ld.parent = -1;
            if (o->fixed_base) {
                ld.type = FR_JOINT_FIXED;
                ld.joint_pose = o->base;
            } else {
                ld.type = FR_JOINT_FREE;
                ld.q0_pos = o->base.p;
                ld.q0_rot = o->base.q;
            }
        } else {
            const fr_urdf_joint *j = &u->joints[i];
            ld.joint_name = j->name;
            ld.parent = j->parent;
            ld.joint_pose = j->parent < 0 ? fr_pose_mul(o->base, j->origin) : j->origin;
            ld.axis = j->axis;
            ld.damping = j->damping;
            ld.effort_limit = j->effort;
            switch (j->type) {
            case FR_URDF_FIXED:
                ld.type = FR_JOINT_FIXED;
                break;
            case FR_URDF_REVOLUTE:
            case FR_URDF_CONTINUOUS:
                ld.type = FR_JOINT_REVOLUTE;
                break;
            case FR_URDF_PRISMATIC:
                ld.type = FR_JOINT_PRISMATIC;
                break;
            case FR_URDF_FLOATING:
                ld.type = FR_JOINT_FREE;
                /* the link starts where the joint frame is; q is relative to the joint frame */
                ld.q0_pos = fr_v3_zero();
                ld.q0_rot = fr_q_identity();
                break;
            }
            /* a mimic follower moves with the joint it follows, whose limits bound both */
            if ((j->type == FR_URDF_REVOLUTE || j->type == FR_URDF_PRISMATIC) && j->mimic < 0 &&
                (isfinite(j->lower) || isfinite(j->upper))) {
                ld.limited = true;
                ld.q_min = j->lower;
                ld.q_max = j->upper;
            }
            if (ld.type == FR_JOINT_REVOLUTE || ld.type == FR_JOINT_PRISMATIC) {
                ld.armature = o->armature;
                ld.q0 = j->q_init;
                for (int k = 0; k < o->nq0; k++)
                    if (!strcmp(o->q0_names[k], j->name)) ld.q0 = o->q0_values[k];
                if (o->velocity_limits && isfinite(j->velocity) && j->velocity > 0)
                    ld.max_velocity = j->velocity;
                if (j->mimic >= 0) {
                    ld.mimic_joint = u->joints[j->mimic].name;
                    ld.mimic_multiplier = j->mimic_multiplier;
                    ld.mimic_offset = j->mimic_offset;
                }
            } else {
                ld.damping = 0;
                ld.effort_limit = INFINITY;
            }
        }
        int r = fr_tree_add_link(t, &ld);
        if (r < 0) err = r;
    }
    if (!err) err = fr_tree_finalize(t);
    if (err) {
        fr_tree_destroy(t);
        return err;
    }
    *out = t;
    return FR_OK;
}

int fr_urdf_collision_shape(const fr_urdf_collision *c, int resolution, fr_shape **out)
{
    switch (c->type) {
    case FR_URDF_BOX:
        return fr_shape_create_box(fr_v3_scale(c->size, 0.5), out);
    case FR_URDF_SPHERE:
        return fr_shape_create_sphere(c->radius, resolution, out);
    case FR_URDF_CYLINDER:
        return fr_shape_create_cylinder(c->radius, 0.5 * c->length, resolution, out);
    case FR_URDF_CAPSULE:
        return fr_shape_create_capsule(c->radius, 0.5 * c->length, resolution, out);
    case FR_URDF_MESH:
        return fr_shape_create_convex(c->points, c->npoints, out);
    }
    return FR_ERR_INVAL;
}
