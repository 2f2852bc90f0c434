/* A record's fixed part as this reader's structs (the format's, include/gputrace/trace_format.h):
 * what the reader decodes into and the record printer reads, one union for all types. */
#ifndef GA_REC_H
#define GA_REC_H

#include "gputrace/trace_format.h"

/* The fixed part of any record. */
union ga_rec {
    struct gt_rec_header h;
    struct gt_rec_process process;
    struct gt_rec_driver driver;
    struct gt_rec_device device;
    struct gt_rec_thread thread;
    struct gt_rec_alloc alloc;
    struct gt_rec_free free;
    struct gt_rec_alloc_fail alloc_fail;
    struct gt_rec_vmm_map vmm_map;
    struct gt_rec_pool pool;
    struct gt_rec_block block;
    struct gt_rec_pool_usage pool_usage;
    struct gt_rec_func func;
    struct gt_rec_launch launch;
    struct gt_rec_span span;
    struct gt_rec_object object;
    struct gt_rec_meminfo meminfo;
    struct gt_rec_resolve resolve;
    struct gt_rec_lost lost;
    struct gt_rec_watermark watermark;
    struct gt_rec_end end;
    struct gt_rec_note note;
    struct gt_rec_cupti cupti;
    struct gt_rec_gpu_kernel gpu_kernel;
    struct gt_rec_gpu_memcpy gpu_memcpy;
    struct gt_rec_gpu_memset gpu_memset;
    struct gt_rec_gpu_extcorr gpu_extcorr;
    struct gt_rec_gpu_api gpu_api;
    struct gt_rec_gpu_name gpu_name;
    struct gt_rec_gpu_dropped gpu_dropped;
    struct gt_rec_stack stack;
    struct gt_rec_module module;
    struct gt_rec_nvml nvml;
    struct gt_rec_nvml_sample nvml_sample;
    struct gt_rec_nvml_proc nvml_proc;
    struct gt_rec_host_sample host_sample;
    struct gt_rec_symbol symbol;
    struct gt_rec_pycode pycode;
    struct gt_rec_torch_stats torch_stats;
    struct gt_rec_torch_snap torch_snap;
    struct gt_rec_torch_segment torch_segment;
    struct gt_rec_torch_block torch_block;
    struct gt_rec_torch_frame torch_frame;
    struct gt_rec_torch_stack torch_stack;
    struct gt_rec_torch_oom torch_oom;
    struct gt_rec_torch_roles torch_roles;
    struct gt_rec_torch_step torch_step;
    struct gt_rec_torch_trace torch_trace;
};

#endif
