/*
 * fureru URDF: robot description files (libxml2) → an articulated tree
 * (include/fureru/articulated.h) plus the links' collision shapes. Start-up only: everything here
 * allocates. docs/robots.md has the full mapping.
 *
 * What is read (the ROS URDF specification):
 * - <link>: <inertial> (<origin xyz rpy>, <mass value>, <inertia ixx ixy ixz iyy iyz izz>: the
 *   tensor is rotated by the inertial rpy into link axes), <collision> (<origin>, <geometry> with
 *   <box size>, <sphere radius>, <cylinder radius length> (axis z) or <mesh filename scale>:
 *   Collada, OBJ, STL, PLY, glTF and what else assimp reads, turned into a convex hull simplified
 *   to opts.hull_vertices).
 * - <joint type="revolute|continuous|prismatic|fixed|floating">: <origin>, <parent link>,
 *   <child link>, <axis xyz> (default 1 0 0), <limit lower upper effort velocity>, <dynamics
 *   damping friction>, <mimic joint multiplier offset>.
 * - <transmission> (ROS 1 and ROS 2 forms): the joint's mechanical reduction and actuator name.
 * - A root link named "world" without an inertial is the world frame: its joints attach links to
 *   the world (a floating joint gives a free base). Any other root gets a free joint, or a fixed
 *   one with fr_urdf_tree_opts.fixed_base. A joint whose parent is an undeclared "world" link is
 *   read the same way (with a warning).
 * Ignored without a word: <visual>, <material>, <gazebo>, <safety_controller>, <calibration>,
 * dynamics friction. Other unknown elements are listed once each (a warning). Planar joints are
 * rejected (FR_ERR_UNSUPPORTED).
 *
 * Repairs (each a warning naming file:line:column, an error with opts.strict): inertias that are
 * not physical are replaced by the nearest physical tensor (fr_urdf_balance_inertia); a mass of 0
 * with an inertia drops the inertia; a movable joint that moves only massless links gives its
 * link FR_URDF_MIN_MASS; a revolute or prismatic joint without <limit> is unlimited, and a missing
 * effort or velocity is unlimited; a zero position outside the limits starts at the nearest limit.
 * Links attached by fixed joints are merged into their parents (opts.merge_fixed): mass, centre
 * of mass and inertia combined exactly, collisions and children moved, and their names kept as
 * frames (fr_urdf_frame_find).
 *
 * Every error of a file is reported in one pass (opts.diags); the fr_diag argument gets the
 * first. Errors name the file, the line (libxml2's xmlGetLineNo), the column of the attribute or
 * element and an XPath of the element and attribute, e.g.
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
    FR_URDF_CAPSULE,  /* <capsule radius length> (an extension): axis z, length of the cylinder */
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
    int line;                     /* of the <collision> element */
    int hull_vertices_full;       /* mesh: vertices of the full convex hull */
    double hull_volume;           /* mesh: volume of the hull used, m³ (= the full one's) */
    double hull_volume_full;      /* mesh: volume of the full hull, m³ */
    double hull_volume_inscribed; /* mesh: volume of the simplified hull before it was scaled
                                     to the full volume, m³ (the simplification's error) */
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
    double velocity;     /* rad/s or m/s; INFINITY without <limit>: the motor cannot drive the
                            joint faster (docs/robots.md) */
    double damping;      /* N·m·s/rad or N·s/m */
    double friction;     /* N·m or N (parsed, not simulated) */
    double q_init;       /* initial position: 0, or the nearest limit when 0 is outside them */
    int mimic;           /* <mimic>: link index of the joint followed, -1 for none */
    const char *mimic_joint;               /* its name (NULL for none) */
    double mimic_multiplier, mimic_offset; /* q = multiplier·q_mimic + offset (rad or m) */
    double reduction;                      /* <transmission> mechanical reduction, 1 when none */
    const char *actuator;                  /* <transmission> actuator name, NULL when none */
    int line;
} fr_urdf_joint;

/* A link merged into another through fixed joints (its name still finds a place on the robot). */
typedef struct fr_urdf_frame {
    const char *name;
    int link;     /* the link (tree order) it became part of */
    fr_pose pose; /* its frame in that link's frame */
    int line;     /* of its <link> element */
} fr_urdf_frame;

typedef struct fr_urdf fr_urdf;

/* Defaults of the repairs. */
#define FR_URDF_MIN_MASS      1e-3 /* kg, given to a moving link when all it moves is massless */
#define FR_URDF_MIN_INERTIA   1e-7 /* kg·m², its principal moments */
#define FR_URDF_HULL_VERTICES 32   /* default vertex budget of a mesh's collision hull */

typedef struct fr_urdf_opts {
    /* package://PKG/REST is looked for, in this order: under each of these directories (DIR/PKG,
     * or DIR itself when it is named PKG, or a PKG folder up to 3 levels below DIR), then the same
     * under each entry of $ROS_PACKAGE_PATH, then in the URDF's own ancestors (an ancestor named
     * PKG, or PKG inside an ancestor); the error lists every place looked at */
    const char *const *package_paths;
    int npackage_paths;
    bool ros_package_path; /* also search $ROS_PACKAGE_PATH (default true) */
    bool strict;           /* every warning is an error (default false) */
    bool merge_fixed;      /* merge links attached by fixed joints into their parents (true) */
    int hull_vertices;     /* mesh hulls keep at most this many vertices (default
                              FR_URDF_HULL_VERTICES; 0: keep the whole hull) */
    /* the armature (rotor inertia, kg·m² or kg) its 1-DOF joints will get in the tree
       (fr_urdf_tree_opts.armature; default 0): a joint that would move no inertia about its
       axis (point masses on it) is an error unless this gives it some (docs/robots.md) */
    double armature;
    bool fixed_base;     /* the tree will have a fixed base (fr_urdf_tree_opts.fixed_base; default
                            false): only for that check */
    fr_diag_list *diags; /* receives every error, warning and note (may be NULL) */
} fr_urdf_opts;
fr_urdf_opts fr_urdf_opts_default(void);

/* Parse a URDF file. Mesh files are resolved relative to the file's directory, package:// as
 * above, file:// absolute. On error *d (may be NULL) holds the first error, with file, line,
 * column, element and attribute; o->diags all of them. o NULL: the defaults. */
int fr_urdf_load(const char *path, const fr_urdf_opts *o, fr_urdf **out, fr_diag *d);
/* The same from a string; `name` is what messages call it, meshes resolve against base_dir. */
int fr_urdf_load_text(const char *xml, const char *name, const char *base_dir,
                      const fr_urdf_opts *o, fr_urdf **out, fr_diag *d);
/* fr_urdf_load / fr_urdf_load_text with the default options. */
int fr_urdf_load_file(const char *path, fr_urdf **out, fr_diag *d);
int fr_urdf_load_string(const char *xml, const char *name, const char *base_dir, fr_urdf **out,
                        fr_diag *d);
void fr_urdf_destroy(fr_urdf *u);

/* The physical inertia tensor nearest to I in the Frobenius norm: principal moments that are
 * non-negative and obey the triangle inequality (I1 + I2 >= I3), i.e. I = tr(S)·1 − S for a
 * positive semi-definite second moment S. Same principal axes; I itself when it is physical.
 * Returns true when I had to change (beyond a relative 1e-9). */
bool fr_urdf_balance_inertia(fr_mat3 I, fr_mat3 *out);

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
/* Links merged into others (opts.merge_fixed). */
int fr_urdf_frame_count(const fr_urdf *u);
const fr_urdf_frame *fr_urdf_frame_at(const fr_urdf *u, int i);
/* A link or merged link by name: the link index (tree order) and the frame's pose in that link's
 * frame (identity for a link itself); -1 when there is neither. pose may be NULL. */
int fr_urdf_frame_find(const fr_urdf *u, const char *name, fr_pose *pose);

typedef struct fr_urdf_tree_opts {
    bool fixed_base; /* a root without a joint: fixed to the world (true) or free (false) */
    fr_pose base;    /* the robot's frame in the world: root links (or the world link) sit here */
    /* initial joint positions by joint name (rad or m), also the PD targets at reset */
    const char *const *q0_names;
    const double *q0_values;
    int nq0;
    double armature;      /* added to every 1-DOF joint, kg·m² or kg (default 0) */
    bool velocity_limits; /* apply <limit velocity> to the motors (default true) */
} fr_urdf_tree_opts;
fr_urdf_tree_opts fr_urdf_tree_opts_default(void);

/* A new finalised tree (the caller owns it): link i is link i here; mimic joints are coupled in
 * the tree (fr_link_def.mimic_joint). FR_ERR_NOTFOUND when a q0 name is not a 1-DOF joint
 * (*bad_q0, when given, gets its index), FR_ERR_RANGE when a q0 value is outside the joint's
 * limits, FR_ERR_INVAL when the tree cannot be built. */
int fr_urdf_build_tree(const fr_urdf *u, const fr_urdf_tree_opts *o, fr_tree **out, int *bad_q0);

/* A collision shape for c (in c's geometry frame; place it at c->origin). resolution: curved
 * shapes' polytope resolution (<= 0: the collision module's default). */
int fr_urdf_collision_shape(const fr_urdf_collision *c, int resolution, fr_shape **out);

/* Read the vertices of a mesh file (every mesh and node of it, node transforms applied) through
 * assimp, multiplied by scale: Collada's <unit> and <up_axis> are honoured (a Y_UP or X_UP file is
 * turned z-up); other formats are taken as they are (glTF included: URDF tools read it without
 * turning it). Coordinates are the shortest decimals that give assimp's single-precision numbers
 * back (what the text said), so a Collada file and an STL of the same mesh agree to double
 * precision. *pts is malloc'd (free() it). FR_ERR_NOTFOUND/IO/PARSE with a message in msg. */
int fr_mesh_load_points(const char *path, fr_vec3 scale, fr_vec3 **pts, int *npts, char *msg,
                        size_t n);
/* The same, and *volume (may be NULL) the mesh's own volume, m³ (its triangles' signed volumes
 * added up), or NAN when the mesh is not closed with consistently turned faces. */
int fr_mesh_load(const char *path, fr_vec3 scale, fr_vec3 **pts, int *npts, double *volume,
                 char *msg, size_t n);
/* A warning for a mesh whose hull is well beyond the mesh (by more than FR_MESH_CONCAVE_REL of
 * its volume: it is not convex, and collides as its hull), written to msg: false when there is
 * none (volume NAN: not closed). */
#define FR_MESH_CONCAVE_REL 0.05
bool fr_mesh_concave_warning(double mesh_volume, double hull_volume, char *msg, size_t n);
/* A warning for a mesh whose hull is so large its units are likely millimetres (its greatest
 * extent beyond FR_MESH_MM_EXTENT m), written to msg: false when there is none. how_to_scale
 * says how to scale it where it was read ("--scale 0.001", or a <mesh> element's scale attribute).
 */
#define FR_MESH_MM_EXTENT 20.0 /* m */
bool fr_mesh_units_warning(double extent, const char *how_to_scale, char *msg, size_t n);

/* The convex hull of pts with at most max_verts vertices (>= 4; <= 0: all): greedy farthest-point
 * insertion among the full hull's vertices (an inscribed approximation). *out (malloc'd) gets the
 * vertices kept, *vol and *vol_full (m³, may be NULL) the volumes of the simplified and the full
 * hull, *nfull the full hull's vertex count. */
int fr_hull_simplify(const fr_vec3 *pts, int n, int max_verts, fr_vec3 **out, int *nout,
                     double *vol, double *vol_full, int *nfull);
/* Scale points about their hull's centroid so the hull has the given volume (m³). */
int fr_hull_volume_match(fr_vec3 *pts, int n, double volume, double *scale);

#ifdef __cplusplus
}
#endif
#endif
