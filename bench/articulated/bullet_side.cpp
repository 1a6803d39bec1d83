// The Bullet side of the articulated benchmark: the hexapod tree as a btMultiBody (double
// precision), and its articulated-body algorithm
// (computeAccelerationsArticulatedBodyAlgorithmMultiDof).
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyLink.h>

extern "C" {
#include "hexapod_tree.h"
}
#include "bullet_side.h"

struct bullet_tree {
    btMultiBody *mb;
    btAlignedObjectArray<btScalar> r;
    btAlignedObjectArray<btVector3> v;
    btAlignedObjectArray<btMatrix3x3> m;
};

extern "C" bullet_tree *bullet_tree_create(const double *q, const double *qd)
{
    hex_link L[HEX_LINKS];
    hex_tree(L);
    bullet_tree *b = new bullet_tree;
    const hex_link &B = L[0];
    b->mb = new btMultiBody(HEX_LINKS - 1, B.mass,
                            btVector3(B.inertia[0], B.inertia[1], B.inertia[2]), false, false);
    for (int i = 1; i < HEX_LINKS; i++) {
        const hex_link &l = L[i];
        const hex_link &p = L[l.parent];
        btVector3 axis(l.axis == 0, l.axis == 1, l.axis == 2);
        // Bullet places joints from the parent's COM and links by their COM
        btVector3 pivot(l.pos[0] - p.com[0], l.pos[1] - p.com[1], l.pos[2] - p.com[2]);
        btVector3 com(l.com[0], l.com[1], l.com[2]);
        b->mb->setupRevolute(i - 1, l.mass, btVector3(l.inertia[0], l.inertia[1], l.inertia[2]),
                             l.parent - 1, btQuaternion::getIdentity(), axis, pivot, com, true);
    }
    b->mb->finalizeMultiDof();
    b->mb->setLinearDamping(0);
    b->mb->setAngularDamping(0);
    b->mb->setBasePos(btVector3(0, 0, 0.2));
    b->mb->setBaseVel(btVector3(qd[3], qd[4], qd[5]));
    b->mb->setBaseOmega(btVector3(qd[0], qd[1], qd[2]));
    for (int i = 1; i < HEX_LINKS; i++) {
        b->mb->setJointPos(i - 1, q[i - 1]);
        b->mb->setJointVel(i - 1, qd[6 + i - 1]);
    }
    // gravity as the dynamics world would add it, once (forces persist across calls here)
    b->mb->addBaseForce(btVector3(0, 0, -9.81 * B.mass));
    for (int i = 1; i < HEX_LINKS; i++)
        b->mb->addLinkForce(i - 1, btVector3(0, 0, -9.81 * L[i].mass));
    return b;
}

extern "C" void bullet_tree_aba(bullet_tree *b)
{
    // dt = 0: accelerations only, the velocities stay as set
    b->mb->computeAccelerationsArticulatedBodyAlgorithmMultiDof(0.0, b->r, b->v, b->m, false, false,
                                                                false);
}

extern "C" void bullet_tree_update_cache(bullet_tree *b)
{
    // the per-link rotation/offset caches Bullet's ABA reads (its counterpart of our pass-1 FK)
    for (int i = 0; i < HEX_LINKS - 1; i++) b->mb->getLink(i).updateCacheMultiDof();
}

extern "C" void bullet_tree_joint_acc(bullet_tree *b, double dt, double *qdd)
{
    // one call with dt > 0 adds qdd·dt to the joint velocities: read the accelerations back
    double v0[HEX_LINKS];
    for (int i = 0; i < HEX_LINKS - 1; i++) v0[i] = b->mb->getJointVel(i);
    b->mb->computeAccelerationsArticulatedBodyAlgorithmMultiDof(dt, b->r, b->v, b->m, false, false,
                                                                false);
    for (int i = 0; i < HEX_LINKS - 1; i++) {
        qdd[i] = (b->mb->getJointVel(i) - v0[i]) / dt;
        b->mb->setJointVel(i, v0[i]);
    }
}

extern "C" void bullet_tree_destroy(bullet_tree *b)
{
    delete b->mb;
    delete b;
}
