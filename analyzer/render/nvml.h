/* The device state's renderers: they read the NVML view alone (model/view_nvml.h). */
#ifndef GA_RENDER_NVML_H
#define GA_RENDER_NVML_H

#include <stddef.h>
#include <stdio.h>

#include "model/view_nvml.h"

struct json_object;

/* text_nvml.c: the device state from NVML, or one line saying it is absent. */
void ga_text_nvml(const struct ga_vnvml *v, FILE *o);
/* text_nvml.c: the processes NVML listed on the device after failed allocation `oom` (its index
 * in ga_memory.ooms[]), one line; nothing without a listing. */
void ga_text_oom_processes(const struct ga_vnvml *v, FILE *o, size_t oom);
/* json_nvml.c: device_state. */
struct json_object *ga_json_device_state(const struct ga_vnvml *v);
/* json_nvml.c: memory.ooms[oom].processes, or null. */
struct json_object *ga_json_oom_processes(const struct ga_vnvml *v, size_t oom);

#endif
