/* URDF loading, shared by its files: urdf_xml.c (locations, diagnostics, attributes),
 * urdf_parse.c (elements → raw links and joints), urdf_mesh.c (mesh files, package:// and hulls),
 * urdf_repair.c (the tree: connection, order, repairs, merging fixed links) and urdf.c (the public
 * API and the articulated tree). Start-up only. */
#ifndef FR_SCENE_URDF_INTERNAL_H
#define FR_SCENE_URDF_INTERNAL_H

#include <libxml/tree.h>
#include <stddef.h>

#include "fureru/urdf.h"

/* ---------------------------------------------------------------- the loaded robot */

struct fr_urdf {
    char *name;
    int nlinks;
    fr_urdf_link *links;   /* tree order */
    fr_urdf_joint *joints; /* [nlinks]: joint into link i; valid when has_joint[i] */
    bool *has_joint;
    int nframes;
    fr_urdf_frame *frames; /* links merged into others through fixed joints */
    int nmimic;            /* joints with <mimic> */
};

/* ---------------------------------------------------------------- parser state */

typedef struct fri_unknown {
    char *name; /* element name */
    int line, col, count;
    char field[256];
} fri_unknown;

typedef struct fri_urdf_parser {
    const char *file; /* as given (messages) */
    const char *dir;  /* for meshes */
    const char *text;
    size_t len;
    const fr_urdf_opts *o;
    fr_diag_list diags; /* everything, in the order found */
    int nerrors;
    fr_diag first_error;
    int first_err_code;
    fri_unknown *unknown; /* unknown elements, listed once each at the end */
    int nunknown, cap_unknown;
} fri_urdf_parser;

/* A link or joint while parsing, in document order. */
typedef struct fri_raw_link {
    fr_urdf_link l;
    fr_urdf_collision *cols;
    xmlNode **col_mesh; /* per collision its <mesh> element, NULL for the other shapes */
    xmlNode *node, *inertial_node;
    int parent_joint; /* raw joint index, -1 */
    int tree_index;
    bool bad;    /* an error inside: kept only to name it */
    bool orphan; /* its parent joint could not be connected (reported): not a second root */
} fri_raw_link;

typedef struct fri_raw_joint {
    fr_urdf_joint j;
    char *parent_name, *child_name, *mimic_name;
    xmlNode *node, *parent_node, *child_node, *limit_node, *mimic_node;
    bool bad;
} fri_raw_joint;

typedef struct fri_raw_trans {
    char *joint;      /* the joint it drives */
    char *actuator;   /* its actuator's name (may be NULL) */
    double reduction; /* mechanical reduction (1 without) */
    xmlNode *node, *joint_node;
} fri_raw_trans;

/* ---------------------------------------------------------------- diagnostics (urdf_xml.c) */

/* Record an error located at an element (and attribute); returns err. */
int fri_urdf_err(fri_urdf_parser *p, const xmlNode *n, const char *attr, int err, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));
/* Record a warning (a repair or something ignored): an error under opts.strict. */
void fri_urdf_warn(fri_urdf_parser *p, const xmlNode *n, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Record a note (information that is never an error). */
void fri_urdf_note(fri_urdf_parser *p, const xmlNode *n, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Remember an element fureru does not know (listed once per name at the end). */
void fri_urdf_unknown(fri_urdf_parser *p, const xmlNode *n);
void fri_urdf_flush_unknown(fri_urdf_parser *p);
/* Line and column of an element or of one of its attributes. */
void fri_urdf_locate(const fri_urdf_parser *p, const xmlNode *n, const char *attr, int *line,
                     int *col);

/* ---------------------------------------------------------------- attributes (urdf_xml.c) */

bool fri_is_elem(const xmlNode *n, const char *name);
xmlNode *fri_child_elem(const xmlNode *n, const char *name, int *count);
/* At most one child of that name (an error on the second, which is then ignored). */
int fri_single_child(fri_urdf_parser *p, const xmlNode *n, const char *name, xmlNode **out);
/* The attribute's value (malloc'd) or NULL when absent. */
char *fri_attr_str(const xmlNode *n, const char *attr);
int fri_required_str(fri_urdf_parser *p, const xmlNode *n, const char *attr, char **out);
enum { FRI_ANY = 0, FRI_POSITIVE = 1, FRI_NONNEG = 2 };
int fri_attr_double(fri_urdf_parser *p, const xmlNode *n, const char *attr, bool required,
                    double def, int range, double *out);
int fri_attr_vec3(fri_urdf_parser *p, const xmlNode *n, const char *attr, bool required,
                  fr_vec3 def, fr_vec3 *out);
/* <origin xyz rpy> child of n (identity when absent or bad). */
int fri_parse_origin(fri_urdf_parser *p, const xmlNode *n, fr_pose *out);
/* A number in an element's text (<mechanicalReduction>50</mechanicalReduction>). */
int fri_text_double(fri_urdf_parser *p, const xmlNode *n, double *out);

/* ---------------------------------------------------------------- elements (urdf_parse.c) */

int fri_urdf_parse_doc(fri_urdf_parser *p, xmlDoc *doc, fr_urdf **out);
void fri_urdf_free_collision(fr_urdf_collision *c);

/* ---------------------------------------------------------------- meshes (urdf_mesh.c) */

/* The <mesh> element of a collision: resolve, read, hull, simplify; errors and notes located at
 * the element. */
int fri_urdf_parse_mesh(fri_urdf_parser *p, const xmlNode *mesh, fr_urdf_collision *c);
/* Once every link is read: a warning for each mesh whose size says millimetres (urdf_mesh.c). */
void fri_urdf_mesh_units(fri_urdf_parser *p, const fri_raw_link *rl, int nl);

/* ---------------------------------------------------------------- the tree (urdf_repair.c) */

/* Connect joints to links, order the tree, repair what can be repaired and merge fixed links;
 * rl/rj are consumed (moved into *out or freed by the caller with fri_urdf_free_raw). */
int fri_urdf_assemble(fri_urdf_parser *p, xmlNode *root, char *name, fri_raw_link *rl, int nl,
                      fri_raw_joint *rj, int nj, fri_raw_trans *tr, int ntr, fr_urdf **out);
void fri_urdf_free_raw(fri_raw_link *rl, int nl, fri_raw_joint *rj, int nj, fri_raw_trans *tr,
                       int ntr);
/* Check a link's inertia, balancing it with a warning when it is not physical. */
void fri_urdf_check_inertia(fri_urdf_parser *p, const xmlNode *n, fr_mat3 *I, double mass);

#endif
