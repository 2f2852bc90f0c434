/* The PyTorch allocator's part of the reports (torch_render.c). */
#ifndef GA_TORCH_RENDER_H
#define GA_TORCH_RENDER_H

#include <stdio.h>

#include <json-c/json.h>

#include "model/report.h"

/* memory.ooms[] entry fields: level, and for PyTorch's OOMs allocator, its figures, evidence. */
void ga_json_torch_oom(const struct ga_report *r, const struct ga_oom *x, struct json_object *o);
/* memory.allocators[]. */
void ga_json_torch(const struct ga_report *r, struct json_object *memory);
/* Lines under one OOM of the text report (nothing for a driver failure). */
void ga_text_torch_oom(const struct ga_report *r, FILE *o, const struct ga_oom *x);
/* The allocator section of the text report (nothing without the bridge's records). */
void ga_text_torch(const struct ga_report *r, FILE *o);

#endif
