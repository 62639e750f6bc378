/*
 * compare_settings.h - `compare --setting`: several experiments side by
 * side in one CSV and one chart, each a baseline strategy, the strategies
 * it is compared with, and the machines it runs on (the paper-reproduction
 * report, docs/paper-reproduction.md).
 *
 * Ownership: a cli_setting points into the argument it was parsed from
 * (argv's storage), which must outlive it.
 */
#ifndef CLI_COMPARE_SETTINGS_H
#define CLI_COMPARE_SETTINGS_H

#include "core/err.h"
#include "predict/predict.h"

#define CLI_MAX_SETTINGS 8
#define CLI_SETTING_MAX 16

typedef struct cli_setting {
    const char *name;
    cp_strategy strat[CLI_SETTING_MAX]; /* strat[0] is the baseline */
    int ns;
    const char *topo[CLI_SETTING_MAX];
    int nt;
} cli_setting;

/* Parse "NAME:BASE,S2[,S3..]:TOPO[,TOPO..]" (spec is cut in place).  CP_OK,
 * or the usage error already reported (CP_EINPUT). */
int cli_setting_parse(char *spec, cli_setting *s);

/* Every model on every machine of every setting under the setting's
 * strategies, one CSV row each, to `out` (atomically); with `svg`, the best
 * strategy's speed-up over the setting's baseline per model and machine,
 * the settings side by side (the k-th machine of every setting in one
 * group, so they must list as many).  gpus/hosts as compare's --gpus and
 * --hosts.  CP_OK or an error. */
int cli_compare_settings(const cli_setting *set, int nset, const char *const *models, int nm,
                         int gpus, int hosts, const cp_predict_opts *po, const char *out,
                         const char *svg, cp_err *e);

#endif
