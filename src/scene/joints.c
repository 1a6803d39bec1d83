/* The scene's `joints:` section (docs/scenes.md, docs/constraint.md): joints between bodies,
 * solved by the world's constraint stage. */
#include <math.h>
#include <string.h>

#include "fureru/joints.h"
#include "scene_internal.h"

static const char *const joint_keys[] = {"name", "type",   "a",     "b",     "anchor", "anchor_b",
                                         "axis", "length", "limit", "motor", "spring", NULL};
static const char *const joint_types[] = {"ball", "hinge", "slider", "fixed", "distance", NULL};
static const char *const motor_keys[] = {"speed", "max", NULL};
static const char *const spring_keys[] = {"stiffness", "damping", "rest", NULL};

static int body_of(const fr_cfg_node *j, const char *key, fri_scene *sc, bool required,
                   fr_body_id *out, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(j, key);
    *out = FR_BODY_NULL;
    if (!n)
        return required ? fr_cfg_error(j, d, FR_ERR_PARSE, "missing required field '%s'", key)
                        : FR_OK;
    char name[48];
    int err = fr_cfg_string(j, key, "", name, sizeof name, d);
    if (err) return err;
    if (!required && strcmp(name, "world") == 0) return FR_OK;
    if (fr_world_find_body(sc->world, name, out) != FR_OK)
        return fr_cfg_error(n, d, FR_ERR_NOTFOUND, "no body named '%s'", name);
    return FR_OK;
}

static const char *const type_names[] = {"static", "kinematic", "dynamic", "link"};

static const char *body_type_name(const fr_world *w, fr_body_id id)
{
    if (fr_body_id_is_null(id)) return "the world";
    int t = fr_body_type(w, id);
    return t >= 0 && t < 4 ? type_names[t] : "?";
}

int fri_scene_parse_joint(const fr_cfg_node *j, fri_scene *sc, fr_diag *d)
{
    if (fr_cfg_node_kind(j) != FR_CFG_MAP)
        return fr_cfg_error(j, d, FR_ERR_PARSE, "each joint must be a mapping");
    int type, err;
    if ((err = fr_cfg_enum(j, "type", joint_types, FR_CJOINT_BALL, &type, d))) return err;
    fr_joint_def def = fr_joint_def_default(type);
    const fr_cfg_node *nn = fr_cfg_get(j, "name");
    if (!nn) return fr_cfg_error(j, d, FR_ERR_PARSE, "missing required field 'name'");
    if ((err = fr_cfg_string(j, "name", "", def.name, sizeof def.name, d))) return err;
    if (!def.name[0]) return fr_cfg_error(nn, d, FR_ERR_PARSE, "the name must not be empty");
    int dup;
    if (fr_world_find_joint(sc->world, def.name, &dup) == FR_OK)
        return fr_cfg_error(nn, d, FR_ERR_PARSE, "duplicate joint name '%s'", def.name);
    if ((err = body_of(j, "a", sc, true, &def.a, d))) return err;
    if ((err = body_of(j, "b", sc, false, &def.b, d))) return err;
    if (fr_body_id_eq(def.a, def.b))
        return fr_cfg_error(fr_cfg_get(j, "b"), d, FR_ERR_RANGE, "a joint needs two bodies");
    int ta = fr_body_type(sc->world, def.a);
    int tb = fr_body_id_is_null(def.b) ? FR_BODY_STATIC : fr_body_type(sc->world, def.b);
    if (ta != FR_BODY_DYNAMIC && ta != FR_BODY_LINK && tb != FR_BODY_DYNAMIC && tb != FR_BODY_LINK)
        return fr_cfg_error(j, d, FR_ERR_RANGE,
                            "a joint needs a dynamic body on one side: a is %s, b is %s",
                            body_type_name(sc->world, def.a), body_type_name(sc->world, def.b));
    fr_pose pa;
    fr_body_get_pose(sc->world, def.a, &pa);
    fr_vec3 anchor, axis;
    if ((err = fr_cfg_vec3(j, "anchor", pa.p, &anchor, d))) return err;
    if ((err = fr_cfg_vec3(j, "axis", fr_v3(0, 0, 1), &axis, d))) return err;
    if (!(fr_v3_norm(axis) > 0))
        return fr_cfg_error(fr_cfg_get(j, "axis"), d, FR_ERR_RANGE, "the axis must not be zero");
    if ((err = fr_joint_def_at(sc->world, &def, anchor, axis)))
        return fr_cfg_error(j, d, err, "cannot place the joint: %s", fr_strerror(err));
    /* a distance joint between two points (a rod): B's end where `anchor_b` says */
    const fr_cfg_node *nb = fr_cfg_get(j, "anchor_b");
    if (nb) {
        if (type != FR_CJOINT_DISTANCE)
            return fr_cfg_error(nb, d, FR_ERR_PARSE,
                                "'anchor_b' is for distance joints (the others join one point)");
        fr_vec3 ab;
        if ((err = fr_cfg_vec3(j, "anchor_b", anchor, &ab, d))) return err;
        fr_pose pb = fr_pose_identity();
        if (!fr_body_id_eq(def.b, FR_BODY_NULL)) fr_body_get_pose(sc->world, def.b, &pb);
        def.frame_b.p = fr_pose_apply_inv(pb, ab); /* (length: the distance, when not given) */
    }
    const fr_cfg_node *nl = fr_cfg_get(j, "length");
    if (nl && type != FR_CJOINT_DISTANCE)
        return fr_cfg_error(nl, d, FR_ERR_PARSE, "'length' is for distance joints");
    if ((err = fr_cfg_double(j, "length", -1.0, FR_CFG_NONNEGATIVE, &def.length, d))) return err;
    /* a ball or fixed joint has no free coordinate: its limit, motor or spring did nothing */
    static const char *const coord_keys[] = {"limit", "motor", "spring", NULL};
    for (int k = 0; coord_keys[k]; k++) {
        const fr_cfg_node *n = fr_cfg_get(j, coord_keys[k]);
        if (n && (type == FR_CJOINT_BALL || type == FR_CJOINT_FIXED))
            return fr_cfg_error(n, d, FR_ERR_PARSE,
                                "a %s joint has no free coordinate for a '%s' (hinge, slider and "
                                "distance joints have one)",
                                joint_types[type], coord_keys[k]);
    }
    double x0; /* the coordinate at the start */
    if ((err = fr_joint_def_position(sc->world, &def, &x0)))
        return fr_cfg_error(j, d, err, "cannot place the joint: %s", fr_strerror(err));
    const char *unit = type == FR_CJOINT_HINGE ? "rad" : "m";
    const fr_cfg_node *lim = fr_cfg_get(j, "limit");
    if (lim) {
        double lh[2];
        const double none[2] = {0, 0};
        if ((err = fr_cfg_doubles(j, "limit", 2, none, FR_CFG_ANY, lh, d))) return err;
        if (!(lh[0] <= lh[1]))
            return fr_cfg_error(lim, d, FR_ERR_RANGE, "limit [lo, hi] needs lo <= hi");
        def.limit = true;
        def.lo = lh[0];
        def.hi = lh[1];
        fr_joint_def_position(sc->world, &def, &x0); /* (in the limit's turn) */
        if (x0 < def.lo - FR_JOINT_START_TOL || x0 > def.hi + FR_JOINT_START_TOL)
            return fr_cfg_error(lim, d, FR_ERR_RANGE,
                                "the joint starts at %.6g %s, outside its limit [%g, %g] (place "
                                "the bodies within it, or widen it)",
                                x0, unit, def.lo, def.hi);
    }
    const fr_cfg_node *mo = fr_cfg_get(j, "motor");
    if (mo) {
        if (fr_cfg_node_kind(mo) != FR_CFG_MAP)
            return fr_cfg_error(mo, d, FR_ERR_PARSE, "'motor' must be a mapping");
        def.motor = true;
        double top = type == FR_CJOINT_HINGE ? FR_WORLD_MAX_JOINT_SPEED : FR_WORLD_MAX_SPEED;
        if ((err = fr_cfg_double_in(mo, "speed", 0.0, -top, top, &def.motor_speed, d))) return err;
        if ((err = fr_cfg_double(mo, "max", 1e3, FR_CFG_NONNEGATIVE, &def.motor_max, d)))
            return err;
        if ((err = fr_cfg_check_unknown(mo, motor_keys, d))) return err;
        /* turning a body about the axis at the motor's speed must keep it below the world's
         * speed limit (1e5 rad/s took a body 0.1 m off the axis to 1e4 m/s: diverged at t = 0) */
        fr_vec3 u = fr_v3_scale(axis, 1.0 / fr_v3_norm(axis));
        for (int side = 0; side < 2 && type == FR_CJOINT_HINGE; side++) {
            fr_body_id id = side ? def.b : def.a;
            int t = fr_body_id_is_null(id) ? FR_BODY_STATIC : fr_body_type(sc->world, id);
            if (t != FR_BODY_DYNAMIC) continue;
            fr_pose p;
            fr_body_get_pose(sc->world, id, &p);
            double r = fr_v3_norm(fr_v3_cross(fr_v3_sub(p.p, anchor), u));
            if (fabs(def.motor_speed) * r > FR_WORLD_MAX_SPEED)
                return fr_cfg_error(fr_cfg_get(mo, "speed"), d, FR_ERR_RANGE,
                                    "at %g rad/s the motor would carry body '%s' (%g m off the "
                                    "axis) at %g m/s, above FR_WORLD_MAX_SPEED (%g m/s)",
                                    def.motor_speed, fr_body_name(sc->world, id), r,
                                    fabs(def.motor_speed) * r, FR_WORLD_MAX_SPEED);
        }
    }
    /* a distance joint's spring rests at `length` unless told: the distance at the start */
    double len0 = def.length >= 0 ? def.length : x0;
    def.rest = type == FR_CJOINT_DISTANCE ? len0 : 0.0;
    const fr_cfg_node *sp = fr_cfg_get(j, "spring");
    if (sp) {
        if (fr_cfg_node_kind(sp) != FR_CFG_MAP)
            return fr_cfg_error(sp, d, FR_ERR_PARSE, "'spring' must be a mapping");
        if ((err = fr_cfg_double(sp, "stiffness", 0.0, FR_CFG_NONNEGATIVE, &def.stiffness, d)))
            return err;
        if ((err = fr_cfg_double(sp, "damping", 0.0, FR_CFG_NONNEGATIVE, &def.damping, d)))
            return err;
        const fr_cfg_node *nr = fr_cfg_get(sp, "rest");
        if ((err = fr_cfg_double(sp, "rest", def.rest,
                                 type == FR_CJOINT_DISTANCE ? FR_CFG_NONNEGATIVE : FR_CFG_ANY,
                                 &def.rest, d)))
            return err;
        if (nr && nl && def.rest != def.length)
            return fr_cfg_error(nr, d, FR_ERR_RANGE,
                                "the spring rests at %g m but 'length' says %g m (a distance "
                                "joint's spring replaces its length: give one)",
                                def.rest, def.length);
        if ((err = fr_cfg_check_unknown(sp, spring_keys, d))) return err;
        double s = type == FR_CJOINT_DISTANCE && def.rest == 0.0 ? x0 : x0 - def.rest;
        if (!isfinite(def.stiffness * s * s))
            return fr_cfg_error(sp, d, FR_ERR_RANGE,
                                "the spring's energy at the start, ½·%g·(%g − %g)², is not finite",
                                def.stiffness, x0, def.rest);
    }
    /* a distance of 0 that nobody asked for (anchor_b and length left out): one point joined,
     * the rope the file meant has no other end */
    bool soft = def.stiffness > 0 || def.damping > 0;
    if (type == FR_CJOINT_DISTANCE && !nl && !(soft && fr_cfg_get(sp, "rest")) && len0 < 1e-9)
        return fr_cfg_error(j, d, FR_ERR_RANGE,
                            "the distance joint's anchors coincide (length 0): give 'anchor_b' "
                            "(b's end of the rod) or 'length', or use type ball");
    if ((err = fr_cfg_check_unknown(j, joint_keys, d))) return err;
    err = fr_world_add_joint(sc->world, &def, NULL);
    if (err) return fr_cfg_error(j, d, err, "cannot add joint: %s", fr_strerror(err));
    return FR_OK;
}

/* ---------------------------------------------------------------- loops: */

static const char *const loop_keys[] = {"name", "type", "a", "b", "axis", NULL};
static const char *const loop_types[] = {"ball", "hinge", NULL};
static const char *const end_keys[] = {"link", "point", NULL};

/* A loop opened wider than this at the robots' initial joint positions is an error (a smaller gap
 * is closed by the first step's position projection). */
#define FRI_LOOP_GAP 1e-3 /* m */

/* One end of a loop: `world`, or {link: ROBOT/LINK or a body name, point: [x, y, z] in the link's
 * frame (a robot link's URDF frame; a body's frame)}. Gives the body (null: the world) and the
 * point's pose-giving frame in the world. */
static int loop_end(const fr_cfg_node *j, const char *key, fri_scene *sc, fr_body_id *body,
                    fr_pose *frame, fr_vec3 *point, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(j, key);
    *body = FR_BODY_NULL;
    *frame = fr_pose_identity();
    *point = fr_v3_zero();
    if (!n) return fr_cfg_error(j, d, FR_ERR_PARSE, "missing required field '%s'", key);
    if (fr_cfg_node_kind(n) == FR_CFG_SCALAR) {
        char s[16];
        int err = fr_cfg_string(j, key, "", s, sizeof s, d);
        if (err) return err;
        if (strcmp(s, "world") != 0)
            return fr_cfg_error(n, d, FR_ERR_PARSE,
                                "'%s' must be 'world' or {link: ROBOT/LINK, point: [x, y, z]}",
                                key);
        return FR_OK;
    }
    if (fr_cfg_node_kind(n) != FR_CFG_MAP)
        return fr_cfg_error(n, d, FR_ERR_PARSE, "'%s' must be a mapping {link, point}", key);
    int err;
    const fr_cfg_node *ln = fr_cfg_get(n, "link");
    if (!ln) return fr_cfg_error(n, d, FR_ERR_PARSE, "missing required field 'link'");
    char name[160];
    if ((err = fr_cfg_string(n, "link", "", name, sizeof name, d))) return err;
    if ((err = fr_cfg_vec3(n, "point", fr_v3_zero(), point, d))) return err;
    if ((err = fr_cfg_check_unknown(n, end_keys, d))) return err;
    fr_world *w = sc->world;
    char *slash = strchr(name, '/');
    if (slash) {
        *slash = 0;
        int r, link = -1;
        if (fr_world_find_robot(w, name, &r) == FR_OK)
            link = fr_tree_link_find(fr_world_robot_tree(w, r), slash + 1);
        if (link < 0) {
            *slash = '/';
            return fr_cfg_error(ln, d, FR_ERR_NOTFOUND,
                                "no robot link '%s' (ROBOT/LINK, a link of the robot's tree)",
                                name);
        }
        fr_world_robot_sync(w, r);
        *frame = fr_world_robot_data(w, r)->pose[link];
        *body = fr_world_robot_link_body(w, r, link);
        return FR_OK;
    }
    if (fr_world_find_body(w, name, body) != FR_OK)
        return fr_cfg_error(ln, d, FR_ERR_NOTFOUND, "no body or robot link named '%s'", name);
    fr_body_get_pose(w, *body, frame);
    return FR_OK;
}

int fri_scene_parse_loop(const fr_cfg_node *j, fri_scene *sc, fr_diag *d)
{
    if (fr_cfg_node_kind(j) != FR_CFG_MAP)
        return fr_cfg_error(j, d, FR_ERR_PARSE, "each loop must be a mapping");
    int type, err;
    if ((err = fr_cfg_enum(j, "type", loop_types, 0, &type, d))) return err;
    fr_joint_def def = fr_joint_def_default(type == 0 ? FR_CJOINT_BALL : FR_CJOINT_HINGE);
    const fr_cfg_node *nn = fr_cfg_get(j, "name");
    if (!nn) return fr_cfg_error(j, d, FR_ERR_PARSE, "missing required field 'name'");
    if ((err = fr_cfg_string(j, "name", "", def.name, sizeof def.name, d))) return err;
    int dup;
    if (fr_world_find_joint(sc->world, def.name, &dup) == FR_OK)
        return fr_cfg_error(nn, d, FR_ERR_PARSE, "duplicate joint or loop name '%s'", def.name);
    fr_pose Fa, Fb;
    fr_vec3 pa, pb, axis;
    if ((err = loop_end(j, "a", sc, &def.a, &Fa, &pa, d))) return err;
    if ((err = loop_end(j, "b", sc, &def.b, &Fb, &pb, d))) return err;
    if (fr_body_id_is_null(def.a))
        return fr_cfg_error(fr_cfg_get(j, "a"), d, FR_ERR_RANGE, "'a' must be a link or body");
    if (fr_body_id_eq(def.a, def.b))
        return fr_cfg_error(fr_cfg_get(j, "b"), d, FR_ERR_RANGE, "a loop needs two links");
    if ((err = fr_cfg_vec3(j, "axis", fr_v3(0, 0, 1), &axis, d))) return err;
    if (!(fr_v3_norm(axis) > 0))
        return fr_cfg_error(fr_cfg_get(j, "axis"), d, FR_ERR_RANGE, "the axis must not be zero");
    if ((err = fr_cfg_check_unknown(j, loop_keys, d))) return err;
    fr_vec3 wa = fr_pose_apply(Fa, pa), wb = fr_pose_apply(Fb, pb);
    double gap = fr_v3_norm(fr_v3_sub(wa, wb));
    if (!(gap <= FRI_LOOP_GAP))
        return fr_cfg_error(j, d, FR_ERR_RANGE,
                            "the loop is open by %.6g m at the initial joint positions (a's point "
                            "at [%.6g, %.6g, %.6g], b's at [%.6g, %.6g, %.6g]); at most %g m",
                            gap, wa.x, wa.y, wa.z, wb.x, wb.y, wb.z, FRI_LOOP_GAP);
    /* the joint frame at a's point, z along the axis given in a's link frame; b's frame at b's
     * own point (a gap below the limit is closed by the first step's projection) */
    if ((err = fr_joint_def_at(sc->world, &def, wa, fr_q_rotate(Fa.q, axis))))
        return fr_cfg_error(j, d, err, "cannot place the loop: %s", fr_strerror(err));
    fr_pose Bb = fr_pose_identity();
    if (!fr_body_id_is_null(def.b)) fr_body_get_pose(sc->world, def.b, &Bb);
    def.frame_b.p = fr_pose_apply(fr_pose_inverse(Bb), wb);
    err = fr_world_add_joint(sc->world, &def, NULL);
    if (err) return fr_cfg_error(j, d, err, "cannot add the loop: %s", fr_strerror(err));
    return FR_OK;
}
