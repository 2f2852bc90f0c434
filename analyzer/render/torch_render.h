/* The PyTorch allocator's part of the reports (torch_render.c). */
#ifndef GA_TORCH_RENDER_H
#define GA_TORCH_RENDER_H

#include <stdio.h>

#include <json-c/json.h>

#include "model/report.h"

/* memory.allocators[]. */
void ga_json_torch(const struct ga_report *r, struct json_object *memory);
/* The allocator section of the text report (nothing without the bridge's records). */
void ga_text_torch(const struct ga_report *r, FILE *o);

#endif
