/* The run's renderers: they read the run's view alone (model/view_run.h). */
#ifndef GA_RENDER_RUN_H
#define GA_RENDER_RUN_H

#include <stdio.h>

#include "model/view_run.h"

struct json_object;

/* text_run.c: the report's head (process, trace, driver and devices), its launches and blocking
 * calls, and its tail (resolver, losses, notes). */
void ga_text_run_head(const struct ga_vrun *v, FILE *o);
void ga_text_run_calls(const struct ga_vrun *v, FILE *o);
void ga_text_run_tail(const struct ga_vrun *v, FILE *o);
/* json_run.c: the root's trace, process, devices and threads objects; then its objects,
 * resolver, notes and notes_omitted. */
void ga_json_run_head(const struct ga_vrun *v, struct json_object *root);
void ga_json_run_tail(const struct ga_vrun *v, struct json_object *root);
/* json_run.c: the timeline object's counts and launches by API (before its top kernels), and its
 * blocking calls by API (after them). */
void ga_json_run_launches(const struct ga_vrun *v, struct json_object *timeline);
void ga_json_run_spans(const struct ga_vrun *v, struct json_object *timeline);

#endif
