// Bullet's btDiscreteDynamicsWorld behind bench/common/engine_bullet.h (see there).
#include "engine_bullet.h"

#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <new>
#include <vector>

struct bench_bullet {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
    std::vector<btCollisionShape *> shapes;
    std::vector<btRigidBody *> bodies; // dynamic ones, by index
    std::vector<btRigidBody *> statics;
    double dt = 0.005, friction = 0.5;
    ~bench_bullet()
    {
        for (auto *r : bodies) {
            world.removeRigidBody(r);
            delete r->getMotionState();
            delete r;
        }
        for (auto *r : statics) {
            world.removeRigidBody(r);
            delete r;
        }
        for (auto *s : shapes) delete s;
    }
};

extern "C" {

bench_bullet *bench_bullet_create(double dt, const double g[3], double mu, int iters)
{
    auto *b = new (std::nothrow) bench_bullet;
    if (!b) return nullptr;
    b->dt = dt;
    b->friction = std::sqrt(mu);
    b->world.setGravity(btVector3(g[0], g[1], g[2]));
    if (iters > 0) b->world.getSolverInfo().m_numIterations = iters;
    return b;
}

void bench_bullet_destroy(bench_bullet *b)
{
    delete b;
}

int bench_bullet_add_ground(bench_bullet *b)
{
    auto *shape = new btStaticPlaneShape(btVector3(0, 0, 1), 0);
    b->shapes.push_back(shape);
    btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, shape);
    info.m_friction = b->friction;
    info.m_restitution = 0;
    auto *r = new btRigidBody(info);
    b->statics.push_back(r);
    b->world.addRigidBody(r);
    return 0;
}

int bench_bullet_add_box(bench_bullet *b, const double size[3], double mass, const double p[3],
                         const double q[4])
{
    auto *shape = new btBoxShape(btVector3(size[0] / 2, size[1] / 2, size[2] / 2));
    b->shapes.push_back(shape);
    btVector3 inertia(0, 0, 0);
    shape->calculateLocalInertia(mass, inertia);
    btTransform t(btQuaternion(q[1], q[2], q[3], q[0]), btVector3(p[0], p[1], p[2]));
    auto *ms = new btDefaultMotionState(t);
    btRigidBody::btRigidBodyConstructionInfo info(mass, ms, shape, inertia);
    info.m_friction = b->friction;
    info.m_restitution = 0;
    auto *r = new btRigidBody(info);
    r->setActivationState(DISABLE_DEACTIVATION); // never sleeps: timed awake, as fureru and ODE
    b->world.addRigidBody(r);
    b->bodies.push_back(r);
    return (int)b->bodies.size() - 1;
}

void bench_bullet_apply_force(bench_bullet *b, int body, const double f[3])
{
    b->bodies[(size_t)body]->applyCentralForce(btVector3(f[0], f[1], f[2]));
}

int bench_bullet_step(bench_bullet *b)
{
    // maxSubSteps 0: exactly one step of dt, no interpolation of the motion states
    b->world.stepSimulation(b->dt, 0);
    return 0;
}

void bench_bullet_pose(const bench_bullet *b, int body, double p[3], double q[4])
{
    const btTransform &t = b->bodies[(size_t)body]->getCenterOfMassTransform();
    const btVector3 &o = t.getOrigin();
    btQuaternion r = t.getRotation();
    p[0] = o.x(), p[1] = o.y(), p[2] = o.z();
    q[0] = r.w(), q[1] = r.x(), q[2] = r.y(), q[3] = r.z();
}

void bench_bullet_vel(const bench_bullet *b, int body, double v[3])
{
    const btVector3 &x = b->bodies[(size_t)body]->getLinearVelocity();
    v[0] = x.x(), v[1] = x.y(), v[2] = x.z();
}

void bench_bullet_contacts(const bench_bullet *b, int *pairs, int *points, double *max_pen)
{
    int np = 0, npt = 0;
    double pen = 0;
    auto &d = const_cast<btCollisionDispatcher &>(b->dispatcher);
    for (int i = 0; i < d.getNumManifolds(); i++) {
        const btPersistentManifold *m = d.getManifoldByIndexInternal(i);
        int c = m->getNumContacts();
        if (c > 0) np++;
        npt += c;
        for (int k = 0; k < c; k++) pen = std::fmax(pen, -m->getContactPoint(k).getDistance());
    }
    *pairs = np, *points = npt, *max_pen = pen;
}
}
