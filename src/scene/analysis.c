/* A scene's `analysis` section: which experiment the scene is, with the parameters its theory
 * needs taken from the built world (docs/scenes.md, docs/experiments.md). */
#include <math.h>
#include <string.h>

#include "fureru/contact.h"
#include "scene_internal.h"

static const char *const analysis_keys[] = {"type", "probe", "on", NULL};
static const char *const analysis_types[] = {"none", "stick-slip", NULL};

static int body_material(const fri_scene *sc, fr_body_id id)
{
    for (int i = 0; i < sc->nbodies_ref; i++)
        if (fr_body_id_eq(sc->body_ref[i].id, id)) return sc->body_ref[i].material;
    return 0;
}

static int stick_slip(const fr_cfg_node *a, fri_scene *sc, fr_diag *d)
{
    fr_scene_analysis *an = &sc->analysis;
    const fr_cfg_node *pn = fr_cfg_get(a, "probe"), *on = fr_cfg_get(a, "on");
    if (!pn) return fr_cfg_error(a, d, FR_ERR_PARSE, "missing required field 'probe'");
    if (!on) return fr_cfg_error(a, d, FR_ERR_PARSE, "missing required field 'on'");
    int err = fr_cfg_string(a, "probe", "", an->probe, sizeof an->probe, d);
    if (!err) err = fr_cfg_string(a, "on", "", an->on, sizeof an->on, d);
    if (err) return err;
    const fr_scene_probe *pr = NULL;
    for (int i = 0; i < sc->nprobes; i++)
        if (!strcmp(sc->probes[i].name, an->probe)) pr = &sc->probes[i];
    if (!pr) return fr_cfg_error(pn, d, FR_ERR_NOTFOUND, "no probe named '%s'", an->probe);
    if (pr->type != FR_PROBE_SPRING || pr->spring < 0 || pr->spring >= sc->nsprings)
        return fr_cfg_error(pn, d, FR_ERR_PARSE, "probe '%s' must be a spring probe", an->probe);
    const fr_spring_def *sp = &sc->springs[pr->spring];
    snprintf(an->spring, sizeof an->spring, "%s", sp->name);
    snprintf(an->body, sizeof an->body, "%s", fr_body_name(sc->world, sp->body));
    an->k = sp->stiffness;
    an->c = sp->damping;
    an->v = fr_v3_norm(sp->anchor_vel);
    if (!(an->k > 0))
        return fr_cfg_error(pn, d, FR_ERR_RANGE,
                            "spring '%s' has no stiffness: nothing to analyse as stick-slip (for "
                            "a run without it, --set analysis.type=none)",
                            sp->name);
    if (!(an->v > 0))
        return fr_cfg_error(pn, d, FR_ERR_RANGE,
                            "the anchor of spring '%s' does not move (anchor_velocity): nothing "
                            "to analyse as stick-slip (for a control run without a drive, --set "
                            "analysis.type=none)",
                            sp->name);
    an->direction = fr_v3_scale(sp->anchor_vel, 1.0 / an->v);
    if (fr_body_type(sc->world, sp->body) != FR_BODY_DYNAMIC)
        return fr_cfg_error(pn, d, FR_ERR_RANGE, "spring '%s' must pull a dynamic body", sp->name);
    fr_body_get_mass(sc->world, sp->body, &an->m, NULL);
    fr_body_id other;
    if (fr_world_find_body(sc->world, an->on, &other) != FR_OK)
        return fr_cfg_error(on, d, FR_ERR_NOTFOUND, "no body named '%s'", an->on);
    /* the friction the world uses for the pair, by the contact module's combination rule */
    fr_contact_material ma, mb;
    fr_contact_params cp;
    if (fr_world_get_material(sc->world, body_material(sc, sp->body), &ma) != FR_OK ||
        fr_world_get_material(sc->world, body_material(sc, other), &mb) != FR_OK ||
        fr_contact_params_combine(&ma, &mb, an->m, fr_world_get_def(sc->world)->dt, &cp) != FR_OK)
        return fr_cfg_error(on, d, FR_ERR_INVAL, "cannot combine the materials of '%s' and '%s'",
                            an->body, an->on);
    an->mu_s = cp.mu_s;
    an->mu_k = cp.mu_k;
    /* gravity split on the support: a slope made by tilting gravity (config/scenes/slope.yaml)
     * presses the body by its normal part and pulls it along the drive by another (a new
     * user's rig under gravity tilted 2.9° read peak and trough 12.5 % off against |g|) */
    fr_pose sup;
    fr_body_get_pose(sc->world, other, &sup);
    const fr_vec3 n = fr_q_rotate(sup.q, fr_v3(0, 0, 1)), gv = fr_world_get_def(sc->world)->gravity;
    an->g = -fr_v3_dot(gv, n);
    an->g_drive = fr_v3_dot(gv, an->direction);
    an->g_side = fr_v3_norm(
        fr_v3_sub(fr_v3_sub(gv, fr_v3_scale(n, -an->g)), fr_v3_scale(an->direction, an->g_drive)));
    return FR_OK;
}

int fri_scene_parse_analysis(const fr_cfg_node *a, fri_scene *sc, fr_diag *d)
{
    memset(&sc->analysis, 0, sizeof sc->analysis);
    if (!a) return FR_OK;
    if (fr_cfg_node_kind(a) != FR_CFG_MAP)
        return fr_cfg_error(a, d, FR_ERR_PARSE, "'analysis' must be a mapping");
    if (!fr_cfg_get(a, "type"))
        return fr_cfg_error(a, d, FR_ERR_PARSE, "missing required field 'type' (stick-slip)");
    int err = fr_cfg_enum(a, "type", analysis_types, 0, &sc->analysis.type, d);
    if (!err && sc->analysis.type == FR_ANALYSIS_STICK_SLIP) err = stick_slip(a, sc, d);
    /* type none keeps the scene's other analysis keys without effect: `--set analysis.type=none`
     * is how a run without a drive (V = 0, a control run) leaves the analysis out */
    if (!err && sc->analysis.type != FR_ANALYSIS_STICK_SLIP) {
        (void)fr_cfg_get(a, "probe");
        (void)fr_cfg_get(a, "on");
    }
    if (!err) err = fr_cfg_check_unknown(a, analysis_keys, d);
    return err;
}
