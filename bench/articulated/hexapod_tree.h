/* The benchmark tree: a hexapod-like body (free base + 3 body joints) with 6 legs of 4 revolute
 * joints (2 at the root, 1 mid, 1 foot): 28 links, 27 joints, 33 velocity DOF. Shared by the
 * fureru and Bullet sides so both build the same tree from the same numbers. */
#ifndef BENCH_HEXAPOD_TREE_H
#define BENCH_HEXAPOD_TREE_H

enum { HEX_LINKS = 28 };

typedef struct hex_link {
    int parent;        /* -1 for the base */
    int axis;          /* 0 x, 1 y, 2 z; -1 for the free base */
    double pos[3];     /* joint origin in the parent link frame (m) */
    double mass;       /* kg */
    double com[3];     /* centre of mass in the link frame (m) */
    double inertia[3]; /* principal moments about the COM, link axes (kg·m²) */
} hex_link;

/* Fills links[HEX_LINKS]; parents come before children. */
static inline void hex_tree(hex_link *L)
{
    int n = 0;
    L[n++] = (hex_link){-1, -1, {0, 0, 0.2}, 2.0, {0, 0, 0}, {0.01, 0.02, 0.025}};
    /* body: base → seg1 → seg2 → seg3, along −x; alternating yaw / pitch joints */
    for (int s = 1; s <= 3; s++)
        L[n++] = (hex_link){s - 1, s % 2 ? 2 : 1, {-0.12, 0, 0},
                            0.6,   {-0.06, 0, 0}, {0.002, 0.004, 0.004}};
    /* legs: pairs on base, seg1 and seg3 (left, right) */
    const int seg[6] = {0, 0, 1, 1, 3, 3};
    for (int g = 0; g < 6; g++) {
        double side = g % 2 ? -1.0 : 1.0;
        int root = seg[g];
        L[n] = (hex_link){
            root, 2, {-0.03, 0.05 * side, 0}, 0.05, {0, 0.01 * side, 0}, {1e-5, 1e-5, 1e-5}};
        n++;
        L[n] =
            (hex_link){n - 1, 0, {0, 0.02 * side, 0}, 0.1, {0, 0.04 * side, 0}, {6e-5, 1e-5, 6e-5}};
        n++;
        L[n] = (hex_link){
            n - 1, 0, {0, 0.08 * side, 0}, 0.08, {0, 0.05 * side, -0.02}, {8e-5, 1e-5, 8e-5}};
        n++;
        L[n] = (hex_link){
            n - 1, 0, {0, 0.1 * side, -0.04}, 0.03, {0, 0.02 * side, -0.03}, {1e-5, 1e-5, 1e-5}};
        n++;
    }
}

#endif
