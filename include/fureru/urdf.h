/*
 * fureru URDF: robot description files (libxml2) → an articulated tree
 * (include/fureru/articulated.h) plus the links' collision shapes. Start-up only: everything here
 * allocates.
 *
 * What is read (the ROS URDF specification; docs/robots.md has the full mapping):
 * - <link>: <inertial> (<origin xyz rpy>, <mass value>, <inertia ixx ixy ixz iyy iyz izz>: the
 *   tensor is rotated by the inertial rpy into link axes), <collision> (<origin>, <geometry> with
 *   <box size>, <sphere radius>, <cylinder radius length> (axis z) or <mesh filename scale>: ASCII
 *   or binary STL and Wavefront OBJ vertices, turned into their convex hull).
 * - <joint type="revolute|continuous|prismatic|fixed|floating">: <origin>, <parent link>,
 *   <child link>, <axis xyz> (default 1 0 0), <limit lower upper effort velocity> (required for
 *   revolute and prismatic), <dynamics damping friction>.
 * - A root link named "world" without an inertial is the world frame: its joints attach links to
 *   the world (a floating joint gives a free base). Any other root gets a free joint, or a fixed
 *   one with fr_urdf_tree_opts.fixed_base.
 * Ignored: <visual>, <material>, <transmission>, <gazebo> and other extension elements, <mimic>,
 * <safety_controller>, <calibration>, dynamics friction (no Coulomb joint friction in the tree) and
 * the velocity limit (parsed and reported, not enforced by the dynamics). Planar joints and
 * Collada meshes are rejected (FR_ERR_UNSUPPORTED).
 *
 * Errors name the file, the line (libxml2's xmlGetLineNo), the column of the attribute or element
 * and an XPath of the element and attribute in fr_diag.field, e.g.
 *   hexapod.urdf:41:29: error: field '/robot/joint[@name='knee']/limit/@effort': missing ...
 */
#ifndef FURERU_URDF_H
#define FURERU_URDF_H

#include <stdbool.h>

#include "fureru/articulated.h"
#include "fureru/collision.h"
#include "fureru/config.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fr_urdf_geom_type {
    FR_URDF_BOX = 0,
    FR_URDF_SPHERE,
    FR_URDF_CYLINDER, /* axis along the geometry frame's z, centred (URDF convention) */
    FR_URDF_MESH,     /* convex hull of the mesh vertices */
} fr_urdf_geom_type;

typedef struct fr_urdf_collision {
    fr_urdf_geom_type type;
    fr_pose origin;        /* geometry frame in the LINK frame (not the centre-of-mass frame) */
    fr_vec3 size;          /* box: full extents, m */
    double radius;         /* sphere, cylinder: m */
    double length;         /* cylinder: full length, m */
    const char *mesh_path; /* mesh: the file that was read (resolved path) */
    const fr_vec3 *points; /* mesh: vertices (scale applied) in the geometry frame, m */
    int npoints;
    int line; /* of the <collision> element */
} fr_urdf_collision;

typedef struct fr_urdf_link {
    const char *name;
    double mass;     /* kg (0 without <inertial>) */
    fr_vec3 com;     /* centre of mass in the link frame, m */
    fr_mat3 inertia; /* about the centre of mass in LINK axes, kg·m² */
    int ncollisions;
    const fr_urdf_collision *collisions;
    int line;
} fr_urdf_link;

typedef enum fr_urdf_joint_type {
    FR_URDF_FIXED = 0,
    FR_URDF_REVOLUTE,
    FR_URDF_CONTINUOUS,
    FR_URDF_PRISMATIC,
    FR_URDF_FLOATING,
} fr_urdf_joint_type;

typedef struct fr_urdf_joint {
    const char *name;
    fr_urdf_joint_type type;
    int parent;          /* link index (tree order), -1 = the world */
    int child;           /* link index; always the link this joint belongs to */
    fr_pose origin;      /* joint frame in the parent link frame (the world link's for parent -1) */
    fr_vec3 axis;        /* unit, joint frame */
    bool has_limit;      /* a <limit> element was given */
    double lower, upper; /* rad or m (revolute, prismatic) */
    double effort;       /* N·m or N; INFINITY without <limit> */
    double velocity;     /* rad/s or m/s; INFINITY without <limit> (not enforced) */
    double damping;      /* N·m·s/rad or N·s/m */
    double friction;     /* N·m or N (parsed, not simulated) */
    int line;
} fr_urdf_joint;

typedef struct fr_urdf fr_urdf;

/* Parse a URDF file. Mesh files are resolved relative to the file's directory (package://PKG/REST:
 * REST under the nearest ancestor directory named PKG, or under PKG in an ancestor; file://
 * absolute). On error *d names file, line, column, element and attribute. */
int fr_urdf_load_file(const char *path, fr_urdf **out, fr_diag *d);
/* The same from a string; `name` is what messages call it, meshes resolve against base_dir. */
int fr_urdf_load_string(const char *xml, const char *name, const char *base_dir, fr_urdf **out,
                        fr_diag *d);
void fr_urdf_destroy(fr_urdf *u);

const char *fr_urdf_name(const fr_urdf *u); /* <robot name> */
/* Links in tree order (parents first, depth first, children in the order of their joints in the
 * file): link i here is link i of the tree that fr_urdf_build_tree makes. The "world" link is not
 * one of them. */
int fr_urdf_link_count(const fr_urdf *u);
const fr_urdf_link *fr_urdf_link_at(const fr_urdf *u, int i);
/* The joint into link i (child == i); NULL for a root that has none (it gets a free or fixed
 * joint named "<link>_root" in the tree). */
const fr_urdf_joint *fr_urdf_joint_at(const fr_urdf *u, int i);
int fr_urdf_link_find(const fr_urdf *u, const char *name);  /* → link index, -1 */
int fr_urdf_joint_find(const fr_urdf *u, const char *name); /* → child link index, -1 */
/* Total movable joint DOF (1 per revolute/continuous/prismatic, 6 per floating). */
int fr_urdf_dof(const fr_urdf *u);

typedef struct fr_urdf_tree_opts {
    bool fixed_base; /* a root without a joint: fixed to the world (true) or free (false) */
    fr_pose base;    /* the robot's frame in the world: root links (or the world link) sit here */
    /* initial joint positions by joint name (rad or m), also the PD targets at reset */
    const char *const *q0_names;
    const double *q0_values;
    int nq0;
    double armature; /* added to every 1-DOF joint, kg·m² or kg (default 0) */
} fr_urdf_tree_opts;
fr_urdf_tree_opts fr_urdf_tree_opts_default(void);

/* A new finalised tree (the caller owns it). FR_ERR_NOTFOUND when a q0 name is not a 1-DOF joint
 * (*bad_q0, when given, gets its index), FR_ERR_RANGE when a q0 value is outside the joint's
 * limits, FR_ERR_INVAL when the tree cannot be built (a movable joint carrying no mass). */
int fr_urdf_build_tree(const fr_urdf *u, const fr_urdf_tree_opts *o, fr_tree **out, int *bad_q0);

/* A collision shape for c (in c's geometry frame; place it at c->origin). resolution: curved
 * shapes' polytope resolution (<= 0: the collision module's default). */
int fr_urdf_collision_shape(const fr_urdf_collision *c, int resolution, fr_shape **out);

/* Read the vertices of a mesh file (ASCII/binary STL, OBJ), multiplied by scale. *pts is malloc'd
 * (free() it). FR_ERR_NOTFOUND/IO/PARSE/UNSUPPORTED with a message in msg (size n). */
int fr_mesh_load_points(const char *path, fr_vec3 scale, fr_vec3 **pts, int *npts, char *msg,
                        size_t n);

#ifdef __cplusplus
}
#endif
#endif
