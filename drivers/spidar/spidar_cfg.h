/* The SPIDAR driver's device-file parser, exposed to the tests (not installed). */
#ifndef FURERU_SPIDAR_CFG_H
#define FURERU_SPIDAR_CFG_H

#include "fureru/config.h"
#include "fureru/spidar.h"

/*
 * A SPIDAR device file's root mapping (NULL = every default) into *cfg: starts from the preset
 * the file names (`preset:`, else inferred from `strings:`, else spidar-4), applies every key
 * through fr_spidar_config_set, checks types, ranges and the motors list, and validates the
 * result with fr_spidar_config_validate. Every error names file, line, column and field. Does
 * not check unknown top-level keys (the registry's caller does, with the common keys).
 */
int fri_spidar_config_from_cfg(const fr_cfg_node *root, fr_spidar_config *cfg, fr_diag *d);

#endif
