/* The corpus runs shared by tests/robots/test_corpus.c and bench/robot/bench_corpus.c: a robot of
 * the corpus (config/robots, listed in tests/robots/corpus/corpus.yaml) dropped on flat ground
 * from its default pose (tests/robots/corpus/drop.yaml), limp or held by joint PD. */
#ifndef FR_TESTS_CORPUS_DROP_H
#define FR_TESTS_CORPUS_DROP_H

#include <stdbool.h>

#include "fureru/world.h"

#define CORPUS_CLEARANCE 0.02   /* m: the lowest collision point starts this high */
#define CORPUS_PD_KP     1000.0 /* N·m/rad (N/m): stiff joint PD on every 1-DOF joint */
#define CORPUS_PD_KD     20.0   /* N·m·s/rad (N·s/m) */

typedef struct corpus_run {
    int err;                /* 0, or the step's error */
    fr_world_fault fault;   /* when err: what diverged */
    double seconds;         /* simulated before the end or the failure, s */
    double pen_max;         /* deepest penetration of the whole run, m */
    double pen_max_at;      /* when, s */
    double pen_rest;        /* deepest penetration in the last second, m */
    double max_joint_speed; /* rad/s or m/s */
    double end_speed;       /* fastest joint (rad/s, m/s) or link (m/s) in the last 0.1 s */
    int end_contacts;       /* contacts at the end (on the ground) */
    double energy_gain;     /* largest rise of the tree's kinetic + potential energy above its
                               start, J (a limp robot can only lose energy) */
    double energy_scale;    /* m·g·(height of its centre of mass at the start), J */
    double cpu_per_step;    /* thread CPU time per world step, s */
    unsigned long velocity_limited;
    double tree_steps;   /* the robot's articulated steps per world step (its link contacts'
                            iteration) */
    long unconverged;    /* world steps whose link-contact iteration did not settle */
    int mimic;           /* mimic joints */
    double mimic_err;    /* largest |q_f − (m·q_j + o)| over the run, rad or m */
    double mimic_travel; /* largest excursion of a follower from its start, rad or m */
    int links, dof, contacts_max;
} corpus_run;

/* Drop the robot of the URDF file `urdf` (a path) in the scene `scene` (drop.yaml): limp, or pd
 * with CORPUS_PD_KP/KD toward its default pose, for `seconds`, with one more --set assignment
 * (`extra`, may be NULL); FR_OK when the run could be set up (the run's own failure is in
 * out->err). */
int corpus_drop(const char *scene, const char *urdf, bool pd, double seconds, const char *extra,
                corpus_run *out);

#endif
