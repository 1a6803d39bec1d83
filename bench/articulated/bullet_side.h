/* C interface to the Bullet side of the articulated benchmark (bullet_side.cpp). */
#ifndef BENCH_BULLET_SIDE_H
#define BENCH_BULLET_SIDE_H
#ifdef __cplusplus
extern "C" {
#endif
typedef struct bullet_tree bullet_tree;
/* q: 27 joint angles; qd: base twist (ω; v) in world axes then 27 joint rates. */
bullet_tree *bullet_tree_create(const double *q, const double *qd);
void bullet_tree_aba(bullet_tree *b);
void bullet_tree_update_cache(bullet_tree *b);
/* The 27 joint accelerations (velocities are restored). */
void bullet_tree_joint_acc(bullet_tree *b, double dt, double *qdd);
void bullet_tree_destroy(bullet_tree *b);
#ifdef __cplusplus
}
#endif
#endif
