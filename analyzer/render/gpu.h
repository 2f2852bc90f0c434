/* The GPU timeline's renderers: they read the GPU view alone (model/view_gpu.h). */
#ifndef GA_RENDER_GPU_H
#define GA_RENDER_GPU_H

#include <stdio.h>

#include "model/view_gpu.h"

struct json_object;

/* text_gpu.c: the GPU timeline section, or one line saying why there is none; with show_stacks
 * (--stacks) the stack of each listed gap. */
void ga_text_gpu(const struct ga_vgpu *v, int show_stacks, FILE *o);
/* json_gpu.c: top_kernels (by GPU time, or by launches without GPU kernels), and the GPU
 * timeline fields added to the timeline object. */
struct json_object *ga_json_top_kernels(const struct ga_vgpu *v);
void ga_json_gpu_timeline(const struct ga_vgpu *v, struct json_object *timeline);
/* json_gpu.c: writes the document root (with flags) and a newline; with --all-gaps streams each
 * device's gaps where the document holds their marker. 0, or -1 (said on stderr) on an error. */
int ga_json_write(const struct ga_vgpu *v, struct json_object *root, int flags, FILE *out);

#endif
