/* gputrace trace format, version 2 — the single source of truth.
 *
 * docs/TRACE_FORMAT.md explains it in prose; this header is what both the shim (writer) and the
 * analyzer (reader) compile against. Rules that keep the format evolvable:
 *   - Everything is little-endian, fixed width and naturally aligned. No bitfields on disk.
 *   - A file is one gt_file_header followed by chunks. A chunk is a gt_chunk_header and a payload
 *     of whole records (stored as they are or compressed: GT_CODEC_*), checksummed, so a file cut
 *     anywhere reads up to its last whole chunk.
 *   - A record starts with gt_rec_header {type, sub, size}; size covers the header and is a
 *     multiple of 8. Readers skip record types they do not know. Fields are only ever appended to
 *     a record: a reader zero-fills fields missing from an older (shorter) record and ignores bytes
 *     past the fields it knows.
 *   - Numeric ids (record types, API ids in trace_api.h) are never reused.
 *   - A record that carries text (a *_len field and bytes after the fixed part) is never extended:
 *     its text starts right after the fixed part, so new fields there go into a new record type.
 *   - Host records sort by their first uint64 (a time). GPU records (GT_CHUNK_GPU) do not: the
 *     analyzer orders them by their own start/end times.
 */
#ifndef GPUTRACE_TRACE_FORMAT_H
#define GPUTRACE_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define GT_MAGIC             "GPUTRACE" /* 8 bytes, no terminator on disk */
#define GT_ENDIAN_TAG        0x01020304u /* reads as 0x04030201 on a foreign-endian host */
#define GT_FORMAT_VERSION    5u /* 2: compressed chunks (codecs below); 3: GT_CODEC_PACK_DELTA;
                                 * 4: gt_file_header.header_crc32; 5: GT_TORCH_STEP_UNREAD */
#define GT_FORMAT_MIN_READER 1u /* oldest reader that can read a file without compressed chunks */
#define GT_FORMAT_MIN_READER_CODEC 2u /* oldest reader that can read a file that may hold them */
#define GT_FORMAT_MIN_READER_PACK 3u /* ... that may hold GT_CODEC_PACK_DELTA chunks */
#define GT_FORMAT_MIN_READER_TORCH 5u /* ... that may hold torch steps GT_TORCH_STEP_UNREAD */

/* Feature flags in gt_file_header.flags. */
#define GT_FEAT_WATERMARKS (1u << 0) /* host chunks carry watermark records (see below) */
#define GT_FEAT_KNOWN      GT_FEAT_WATERMARKS /* a file of our version or older sets no other bit */

/* First format whose file header carries header_crc32: zlib crc32 of the header's bytes before
 * that field, then of those after it up to header_size. Older readers ignore the field (it was
 * `reserved`, always 0), so writing it does not raise min_version. */
#define GT_FORMAT_HEADER_CRC 4u

struct gt_file_header {
    char magic[8];              /* GT_MAGIC */
    uint32_t endian;            /* GT_ENDIAN_TAG as the writer's CPU stores it */
    uint16_t version;           /* GT_FORMAT_VERSION of the writer */
    uint16_t min_version;       /* readers older than this must refuse the file */
    uint32_t header_size;       /* sizeof(struct gt_file_header) of the writer; chunks follow it */
    uint32_t flags;             /* GT_FEAT_* */
    uint32_t pid;               /* process that wrote the trace */
    uint32_t ppid;
    uint64_t start_realtime_ns; /* CLOCK_REALTIME at trace start */
    uint64_t start_monotonic_ns; /* CLOCK_MONOTONIC at the same instant; all record times use it */
    uint32_t clock_id;          /* clock of record timestamps: 1 = CLOCK_MONOTONIC */
    uint32_t header_crc32;      /* version >= GT_FORMAT_HEADER_CRC: see above; else 0 */
};
_Static_assert(sizeof(struct gt_file_header) == 56, "gt_file_header layout");

#define GT_CHUNK_MAGIC 0x4b435447u /* "GTCK" */

/* Chunk kinds: which ordering the records in it follow. */
enum gt_chunk_kind {
    GT_CHUNK_HOST = 1, /* host-side records of one thread, in the order that thread wrote them */
    GT_CHUNK_GPU = 2,  /* GPU activity records (CUPTI), delivered late and out of host order */
};

/* Chunk codecs: how the records of a chunk are stored in its payload. */
#define GT_CODEC_NONE       0u /* the records as they are */
#define GT_CODEC_ZSTD       1u /* gt_codec_head, one zstd frame of the records, zero padding */
#define GT_CODEC_ZSTD_DELTA 2u /* the same, the frame holding the records after the delta
                                * transform (see below) */
#define GT_CODEC_PACK_DELTA 3u /* gt_codec_head, the records after the delta transform coded
                                * word by word (see below), zero padding; format 3 */

struct gt_chunk_header {
    uint32_t magic;        /* GT_CHUNK_MAGIC */
    uint16_t kind;         /* enum gt_chunk_kind */
    uint16_t codec;        /* GT_CODEC_*; readers stop at a codec they do not know */
    uint32_t payload_size; /* bytes of payload following this header (as stored), a multiple of 8 */
    uint32_t crc32;        /* zlib crc32 of this header without this field, then of the payload */
    uint32_t tid;          /* kernel thread id of the writer (0 for the tracer's own records) */
    uint32_t seq;          /* per-writer sequence number, starting at 0 */
};
_Static_assert(sizeof(struct gt_chunk_header) == 24, "gt_chunk_header layout");

#define GT_MAX_CHUNK_PAYLOAD (64u << 20) /* readers reject larger chunks as corrupt, stored or
                                          * decoded */

/* Head of the payload of a compressed chunk (codec GT_CODEC_ZSTD or GT_CODEC_ZSTD_DELTA). After
 * it: packed_size bytes holding exactly one zstd frame whose header states its content size
 * (= raw_size), then zero bytes up to payload_size = 8 + packed_size rounded up to a multiple of
 * 8. The chunk's crc32 covers the payload as stored (compressed). Decoded, the payload is
 * raw_size bytes of whole records, as in a GT_CODEC_NONE chunk.
 *
 * The delta transform (GT_CODEC_ZSTD_DELTA) makes fixed-width records compress far better: walk
 * the decoded records in order; a record's header (its first 8 bytes) is stored as is; when the
 * previous record of the same type (type < GT_CODEC_DELTA_TYPES) in this chunk has the same size,
 * every other uint64 word w[i] (i >= 1) of the record is stored as w[i] - prev.w[i] (mod 2^64).
 * The walk ends at the first record header whose size is < 8, not a multiple of 8 or past the
 * end: bytes from there on are stored as they are. A reader undoes it in the same walk, adding
 * the previous record's restored words.
 *
 * GT_CODEC_PACK_DELTA (what the shim writes for host chunks): after the head, packed_size bytes
 * of a word stream, no zstd: the raw_size / 8 uint64 words of the records after the delta
 * transform, each with a 2-bit code, in groups of four words: a control byte (word j's code in
 * bits 2j..2j+1; codes past the last word 3), then those words' bytes. A header the delta walk
 * visits (or stops at): codes 0..2 = the 1st/2nd/3rd most recent distinct header (move to
 * front; all 0 at the start), 3 = a wide value of it XOR the most recent. Other words: z =
 * zigzag(v) = (v << 1) ^ (v >> 63 arithmetic); code 0: z = 0, 1: z < 2^8 in 1 byte, 2: z < 2^16
 * in 2 bytes, 3: a wide value of v. Wide value of x != 0: a byte s << 4 | l (s = zero low bytes
 * of x, 1 <= l, s + l <= 8), then l bytes of zigzag(x >> 8s). Little-endian throughout. A reader
 * decodes in one pass, restoring and checking headers as the delta walk does. */
struct gt_codec_head {
    uint32_t raw_size;    /* bytes of records once decoded: a multiple of 8, at most
                           * GT_MAX_CHUNK_PAYLOAD */
    uint32_t packed_size; /* bytes of the zstd frame (or packed stream) that follows this head */
};
_Static_assert(sizeof(struct gt_codec_head) == 8, "gt_codec_head layout");

#define GT_CODEC_DELTA_TYPES 256u

struct gt_rec_header {
    uint16_t type; /* enum gt_rec_type */
    uint16_t sub;  /* meaning depends on type; for API records the gt_api id (trace_api.h) */
    uint32_t size; /* bytes of the whole record including this header; multiple of 8, >= 8 */
};
_Static_assert(sizeof(struct gt_rec_header) == 8, "gt_rec_header layout");

enum gt_rec_type {
    GT_REC_PROCESS = 1,     /* gt_rec_process: process facts, first record of the trace */
    GT_REC_DRIVER = 2,      /* gt_rec_driver: after the first successful cuInit */
    GT_REC_DEVICE = 3,      /* gt_rec_device: one per device, after GT_REC_DRIVER */
    GT_REC_THREAD = 4,      /* gt_rec_thread: first record of each traced thread */
    GT_REC_ALLOC = 10,      /* gt_rec_alloc: a successful allocation (sub = api) */
    GT_REC_FREE = 11,       /* gt_rec_free: a free, successful or not (sub = api) */
    GT_REC_ALLOC_FAIL = 12, /* gt_rec_alloc_fail: a failed allocation (sub = api) */
    GT_REC_VMM_MAP = 13,    /* gt_rec_vmm_map: cuMemMap / cuMemUnmap (sub = api) */
    GT_REC_POOL = 14,  /* gt_rec_pool: an annotated pool's life and ranges (sub = gt_pool_op) */
    GT_REC_BLOCK = 15, /* gt_rec_block: a block of an annotated pool (sub = gt_block_op) */
    GT_REC_POOL_USAGE = 16, /* gt_rec_pool_usage: a stream-ordered pool's reserved/used bytes */
    GT_REC_FUNC = 20,       /* gt_rec_func: name of a CUfunction/CUkernel handle, once per handle */
    GT_REC_LAUNCH = 21,     /* gt_rec_launch: a launch call (sub = api) */
    GT_REC_SPAN = 22,       /* gt_rec_span: a blocking call with enter/exit times (sub = api) */
    GT_REC_OBJECT = 23,     /* gt_rec_object: context/stream/pool lifetime events (sub = api) */
    GT_REC_MEMINFO = 24,    /* gt_rec_meminfo: a cuMemGetInfo sample */
    GT_REC_RESOLVE = 25,    /* gt_rec_resolve: a driver entry point handed out (sub = how) */
    GT_REC_LOST = 30,       /* gt_rec_lost: records this writer had to drop */
    GT_REC_WATERMARK = 31,  /* gt_rec_watermark: host ordering barrier (see below) */
    GT_REC_END = 32,        /* gt_rec_end: the tracer shut down cleanly */
    GT_REC_NOTE = 33,       /* gt_rec_note: a diagnostic the report should show */
    GT_REC_CUPTI = 40, /* gt_rec_cupti: (host) whether the GPU timeline is recorded, and why not */
    GT_REC_GPU_KERNEL = 41, /* gt_rec_gpu_kernel: (GPU chunk) a kernel's execution */
    GT_REC_GPU_MEMCPY =
        42, /* gt_rec_gpu_memcpy: (GPU chunk) a copy (sub = CUpti_ActivityMemcpyKind) */
    GT_REC_GPU_MEMSET = 43,  /* gt_rec_gpu_memset: (GPU chunk) a memset */
    GT_REC_GPU_EXTCORR = 44, /* gt_rec_gpu_extcorr: (GPU chunk) our launch corr id <-> CUPTI's */
    GT_REC_GPU_API = 45,     /* gt_rec_gpu_api: (GPU chunk) a driver call as CUPTI saw it; the
                                shim writes none since issue 23 (readers count them) */
    GT_REC_GPU_NAME = 46,    /* gt_rec_gpu_name: (GPU chunk) a kernel name, by id */
    GT_REC_GPU_DROPPED = 47, /* gt_rec_gpu_dropped: (GPU chunk) records CUPTI could not deliver */
    GT_REC_STACK = 50,       /* gt_rec_stack: new nodes of the host call-stack tree (see below) */
    GT_REC_MODULE = 51,      /* gt_rec_module: a loaded object: path, address range, build-id */
    GT_REC_SYMBOL = 52,      /* gt_rec_symbol: a function name the tracer looked up with dladdr */
    GT_REC_PYCODE = 53, /* gt_rec_pycode: a Python code object that Python frames of stacks name */
    /* A framework caching allocator seen from inside (the PyTorch bridge, python/gputrace_torch.py:
     * see "framework allocators" below). */
    GT_REC_TORCH_STATS = 60,   /* gt_rec_torch_stats: allocator statistics (sub = gt_torch_why) */
    GT_REC_TORCH_SNAP = 61,    /* gt_rec_torch_snap: a snapshot begins / ends (sub = gt_snap_op) */
    GT_REC_TORCH_SEGMENT = 62, /* gt_rec_torch_segment: one segment of the snapshot */
    GT_REC_TORCH_BLOCK = 63,   /* gt_rec_torch_block: one block of the segment before it */
    GT_REC_TORCH_FRAME = 64,   /* gt_rec_torch_frame: an interned Python frame (file, line, name) */
    GT_REC_TORCH_STACK = 65,   /* gt_rec_torch_stack: an interned list of frames */
    GT_REC_TORCH_OOM = 66,     /* gt_rec_torch_oom: the allocator raised out-of-memory */
    GT_REC_NVML = 70,   /* gt_rec_nvml: NVML's status, and a CUDA device's NVML device (sub) */
    GT_REC_NVML_SAMPLE = 71, /* gt_rec_nvml_sample: one device's state from NVML */
    GT_REC_NVML_PROC = 72,   /* gt_rec_nvml_proc: a process holding memory on a device (at OOM) */
    GT_REC_HOST_SAMPLE = 73, /* gt_rec_host_sample: a timer sample of a thread's host stack */
    GT_REC_TORCH_ROLES = 80, /* gt_rec_torch_roles: tensors an optimizer holds, by role */
    GT_REC_TORCH_STEP = 81,  /* gt_rec_torch_step: an optimizer step, its bytes by role */
    GT_REC_TORCH_TRACE = 82, /* gt_rec_torch_trace: the allocator's block events (history) */
};

/* Every host record's sort key is its first uint64 after the header (ts or ts_enter), a
 * CLOCK_MONOTONIC nanosecond time. Host records from different threads interleave in the file;
 * a reader restores global time order by buffering host records until a GT_REC_WATERMARK record
 * with time W arrives: no host record with ts < W appears after that watermark. So a reader needs
 * memory for one flush interval of records, not for the whole file. */

struct gt_rec_process {
    struct gt_rec_header h;
    uint64_t ts; /* CLOCK_MONOTONIC at trace start (= gt_file_header.start_monotonic_ns) */
    uint32_t pid, ppid;
    uint64_t start_realtime_ns;
    uint32_t argc;
    uint32_t cmdline_len; /* bytes of argv, each NUL-terminated, following the fixed part */
    uint32_t host_len;    /* bytes of the host name (no NUL) following argv */
    uint32_t exe_len;     /* bytes of the executable path (no NUL) following the host name */
    /* char data[cmdline_len + host_len + exe_len], padded with NULs to a multiple of 8 */
};
_Static_assert(sizeof(struct gt_rec_process) == 48, "gt_rec_process layout");

struct gt_rec_driver {
    struct gt_rec_header h;
    uint64_t ts;
    int32_t driver_version; /* cuDriverGetVersion: 1000 * major + 10 * minor */
    int32_t device_count;
};
_Static_assert(sizeof(struct gt_rec_driver) == 24, "gt_rec_driver layout");

struct gt_rec_device {
    struct gt_rec_header h;
    uint64_t ts;
    int32_t ordinal;
    int32_t cc_major, cc_minor;
    uint32_t name_len; /* bytes of the name (no NUL) following the fixed part, padded to 8 */
    uint64_t total_bytes;
    uint8_t uuid[16];
};
_Static_assert(sizeof(struct gt_rec_device) == 56, "gt_rec_device layout");

struct gt_rec_thread {
    struct gt_rec_header h;
    uint64_t ts;
    uint32_t tid;
    uint32_t name_len; /* bytes of the thread name (no NUL) following, padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_thread) == 24, "gt_rec_thread layout");

struct gt_rec_alloc {
    struct gt_rec_header h; /* sub = api */
    uint64_t ts;            /* after the call returned successfully */
    uint64_t addr;          /* device pointer, host pointer, or handle (arrays, VMM handles) */
    uint64_t size;          /* bytes requested (pitch allocations: pitch * height) */
    uint64_t stream;        /* CUstream for stream-ordered calls, else 0 */
    uint64_t ctx;           /* current CUcontext at the call (0 if none) */
    uint64_t aux;           /* api specific: pool handle, pitch, flags */
    int32_t device;         /* device ordinal, -1 for host memory or unknown */
    uint32_t flags;         /* api specific flags argument */
    /* Appended (older writers: a record of 64 bytes when no stack was taken). */
    uint32_t stack;         /* host call stack: gt_rec_stack node id of the innermost frame, 0 none */
    uint32_t dur_ns;        /* time spent inside the call, saturated at UINT32_MAX; was padding:
                             * 0 = unknown (older writers) */
};
_Static_assert(sizeof(struct gt_rec_alloc) == 72, "gt_rec_alloc layout");

struct gt_rec_free {
    struct gt_rec_header h; /* sub = api */
    uint64_t ts;            /* before the call was forwarded */
    uint64_t addr;
    uint64_t stream;
    uint64_t size;  /* bytes named by the call (cuMemAddressFree), else 0 */
    int32_t result; /* CUresult of the call */
    uint32_t stack; /* host call stack (gt_rec_stack node id), 0 none; was padding, always 0 */
    /* Appended (older writers: 48 bytes). */
    uint32_t dur_ns; /* time spent inside the call, saturated at UINT32_MAX; 0 = unknown */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_free) == 56, "gt_rec_free layout");

struct gt_rec_alloc_fail {
    struct gt_rec_header h; /* sub = api */
    uint64_t ts;
    uint64_t size; /* bytes requested */
    uint64_t stream;
    uint64_t ctx;
    uint64_t free_bytes;  /* cuMemGetInfo right after the failure (0 if it failed too) */
    uint64_t total_bytes;
    int32_t device;
    int32_t result; /* CUresult of the failed call */
    /* Appended (older writers: a record of 64 bytes when no stack was taken). */
    uint32_t stack;  /* host call stack (gt_rec_stack node id), 0 none */
    uint32_t dur_ns; /* time spent inside the failed call, saturated; was padding: 0 = unknown */
};
_Static_assert(sizeof(struct gt_rec_alloc_fail) == 72, "gt_rec_alloc_fail layout");

struct gt_rec_vmm_map {
    struct gt_rec_header h; /* sub = api (cuMemMap or cuMemUnmap) */
    uint64_t ts;
    uint64_t addr;
    uint64_t size;
    uint64_t offset; /* cuMemMap: offset into the handle */
    uint64_t handle; /* cuMemMap: the physical allocation handle */
    int32_t result;
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_vmm_map) == 56, "gt_rec_vmm_map layout");

/* ---- two-level memory: pools ---------------------------------------------------------------------
 * An allocator that carves blocks out of memory it holds (PyTorch's caching allocator, a CuPy
 * pool, an arena) describes itself through the annotation API (include/gputrace/annotate.h):
 * a pool is created, ranges of memory are added to and removed from it, blocks are taken from it
 * and returned. Driver-level records still describe where that memory came from; pools are the
 * second level. `pool` is the caller's id (any nonzero value, unique while the pool lives). */
enum gt_pool_op {
    GT_POOL_CREATE = 1,       /* name follows; addr/size 0 */
    GT_POOL_ADD_RANGE = 2,    /* [addr, addr + size) now belongs to the pool (free until taken) */
    GT_POOL_REMOVE_RANGE = 3, /* [addr, addr + size) leaves the pool (blocks in it are gone too) */
    GT_POOL_DESTROY = 4,      /* the pool and all its ranges and blocks are gone */
};

struct gt_rec_pool {
    struct gt_rec_header h; /* sub = enum gt_pool_op */
    uint64_t ts;
    uint64_t pool;
    uint64_t addr;
    uint64_t size;
    int32_t device;    /* device ordinal of the memory, -1 unknown */
    uint32_t stack;    /* host call stack (gt_rec_stack node id), 0 none */
    uint32_t flags;    /* reserved, 0 */
    uint32_t name_len; /* CREATE: bytes of the pool's name (no NUL) following, padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_pool) == 56, "gt_rec_pool layout");

enum gt_block_op {
    GT_BLOCK_ALLOC = 1, /* [addr, addr + size) of the pool is in use */
    GT_BLOCK_FREE = 2,  /* the block at addr is free again (size as the caller gave it, 0 unknown) */
    GT_BLOCK_FAIL = 3,  /* the pool could not serve a request of size bytes (addr 0) */
};

struct gt_rec_block {
    struct gt_rec_header h; /* sub = enum gt_block_op */
    uint64_t ts;
    uint64_t pool;
    uint64_t addr;
    uint64_t size;
    uint32_t stack; /* host call stack (gt_rec_stack node id), 0 none */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_block) == 48, "gt_rec_block layout");

/* A CUDA stream-ordered pool (CUmemoryPool) as cuMemPoolGetAttribute reports it: sampled by the
 * shim at pool events (create, trim, a failed stream-ordered allocation) and at most every
 * GPUTRACE_SAMPLE_MS at stream-ordered allocations and frees. */
struct gt_rec_pool_usage {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t pool;             /* CUmemoryPool */
    uint64_t reserved_current; /* CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT */
    uint64_t reserved_high;    /* CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH */
    uint64_t used_current;     /* CU_MEMPOOL_ATTR_USED_MEM_CURRENT */
    uint64_t used_high;        /* CU_MEMPOOL_ATTR_USED_MEM_HIGH */
    int32_t device;            /* the pool's device, -1 unknown */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_pool_usage) == 64, "gt_rec_pool_usage layout");

enum gt_func_kind { GT_FUNC_FUNCTION = 0, GT_FUNC_KERNEL = 1, GT_FUNC_UNKNOWN = 2 };

struct gt_rec_func {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t handle;   /* CUfunction or CUkernel as passed to the launch call */
    uint32_t kind;     /* enum gt_func_kind: which driver call named it */
    uint32_t name_len; /* bytes of the (mangled) name following, padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_func) == 32, "gt_rec_func layout");

struct gt_rec_launch {
    struct gt_rec_header h; /* sub = api */
    uint64_t ts;            /* before the call was forwarded */
    uint64_t func;          /* CUfunction/CUkernel; CUgraphExec for graph launches; host fn */
    uint64_t stream;
    uint64_t corr; /* tracer correlation id: (thread index << 40) | per-thread counter */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shmem;
    int32_t result;   /* CUresult of the launch call */
    uint32_t dur_ns;  /* time spent inside the launch call, saturated at UINT32_MAX */
    uint32_t stack;   /* host call stack (gt_rec_stack node id), 0 none; was padding, always 0 */
};
_Static_assert(sizeof(struct gt_rec_launch) == 80, "gt_rec_launch layout");

struct gt_rec_span {
    struct gt_rec_header h; /* sub = api */
    uint64_t ts_enter;
    uint64_t ts_exit;
    uint64_t object; /* stream, event or context waited on; destination for copies */
    uint64_t bytes;  /* copies: bytes moved; cuStreamWaitEvent: the event */
    int32_t result;
    uint32_t stack;  /* host call stack (gt_rec_stack node id), 0 none; was padding, always 0 */
};
_Static_assert(sizeof(struct gt_rec_span) == 48, "gt_rec_span layout");

struct gt_rec_object {
    struct gt_rec_header h; /* sub = api (context/stream/pool create, destroy, reset, trim) */
    uint64_t ts;
    uint64_t handle; /* the context, stream or pool */
    uint64_t aux;    /* api specific: flags, trim size */
    int32_t device;
    int32_t result;
};
_Static_assert(sizeof(struct gt_rec_object) == 40, "gt_rec_object layout");

struct gt_rec_meminfo {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t free_bytes;
    uint64_t total_bytes;
    int32_t device;
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_meminfo) == 40, "gt_rec_meminfo layout");

/* gt_rec_resolve.h.sub: how the program asked for a driver entry point. */
enum gt_resolve_how {
    GT_RESOLVE_DLSYM = 1,    /* dlsym with libcuda's handle, RTLD_DEFAULT or RTLD_NEXT */
    GT_RESOLVE_GETPROC = 2,  /* cuGetProcAddress (4 arguments, CUDA 11.3 ABI) */
    GT_RESOLVE_GETPROC2 = 3, /* cuGetProcAddress_v2 (5 arguments) */
};

struct gt_rec_resolve {
    struct gt_rec_header h; /* sub = enum gt_resolve_how */
    uint64_t ts;
    int32_t version;   /* cudaVersion asked for (0 for dlsym) */
    uint32_t flags;    /* cuGetProcAddress flags */
    uint16_t api;      /* gt_api id of the wrapper handed out, 0 if passed through unwrapped */
    uint16_t status;   /* 0 found, 1 symbol not found, 2 version not sufficient, 3 call failed */
    uint32_t name_len; /* bytes of the symbol name following, padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_resolve) == 32, "gt_rec_resolve layout");

struct gt_rec_lost {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t count; /* records dropped by this writer since its previous gt_rec_lost */
};
_Static_assert(sizeof(struct gt_rec_lost) == 24, "gt_rec_lost layout");

struct gt_rec_watermark {
    struct gt_rec_header h;
    uint64_t ts; /* every host record with ts < this one was written before this record */
};
_Static_assert(sizeof(struct gt_rec_watermark) == 16, "gt_rec_watermark layout");

enum gt_end_reason { GT_END_EXIT = 0, GT_END_DISABLED = 1 };

struct gt_rec_end {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t records; /* records written over the whole run (this one excluded) */
    uint64_t lost;    /* records dropped over the whole run */
    uint32_t reason;  /* enum gt_end_reason */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_end) == 40, "gt_rec_end layout");

enum gt_note_level { GT_NOTE_INFO = 0, GT_NOTE_WARNING = 1 };

struct gt_rec_note {
    struct gt_rec_header h;
    uint64_t ts;
    uint32_t level;    /* enum gt_note_level */
    uint32_t text_len; /* bytes of UTF-8 text following, padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_note) == 24, "gt_rec_note layout");

/* ---- host call stacks --------------------------------------------------------------------------
 * Stacks are interned as a tree (heaptrack's trace tree): node = (ip, parent node), ids 1, 2, ...
 * in the order the tracer created them, 0 = none/root. An event's `stack` names the node of its
 * innermost frame; its stack is that node's ip, its parent's ip, ... up to a node whose parent is
 * 0 (the outermost frame taken). Each node is written once, so the trace grows with unique stacks,
 * not with events. An ip is a return address minus one (inside the call instruction), in the
 * process's address space at the time; gt_rec_module records say which object was mapped there.
 * Nodes may come after events that use them, in another thread's chunk, or (file cut short)
 * never: readers resolve stacks at the end and treat unknown ids as unknown stacks.
 * Python frames join the same tree as pseudo-frames (GT_IP_PYTHON below), so events keep one
 * stack id. */

/* `count` new nodes, ids first_id .. first_id+count-1: node first_id has parent `parent`, each
 * later one the node before it; ip[i] is the ip of node first_id+i (outermost first). */
struct gt_rec_stack {
    struct gt_rec_header h;
    uint64_t ts;
    uint32_t first_id;
    uint32_t parent;  /* parent of first_id: an existing node, or 0 (first_id is outermost) */
    uint32_t ips_len; /* bytes of the uint64_t ip array following: 8 * count */
    uint32_t pad;
    /* uint64_t ip[count] */
};
_Static_assert(sizeof(struct gt_rec_stack) == 32, "gt_rec_stack layout");

/* A Python frame's node ip: bit 63 set (no native ip has it: user-space addresses are below
 * 2^57), bits 24..55 the gt_rec_pycode id of its code object, bits 0..23 its current line (0 =
 * unknown, lines past 2^24-1 are written as 2^24-1); bits 56..62 are 0 (a reader treats an ip with
 * bit 63 and any of them set as unknown). A stack with Python frames holds, innermost first, the
 * native frames down to the first one inside the interpreter (the object exporting the CPython
 * API), then the Python frames, innermost first; the interpreter's own native frames and
 * everything outside them are left out. */
#define GT_IP_PYTHON        (1ull << 63)
#define GT_PY_LINE_MAX      0xffffffu
#define GT_PYFRAME_IP(code, line) (GT_IP_PYTHON | (uint64_t)(uint32_t)(code) << 24 | (line))
#define GT_IP_IS_PYTHON(ip) (((ip) >> 56) == 0x80u)
#define GT_PYFRAME_CODE(ip) ((uint32_t)((ip) >> 24))
#define GT_PYFRAME_LINE(ip) ((uint32_t)(ip)&GT_PY_LINE_MAX)

/* A Python code object, written before the first node whose ip names it. ids 1, 2, ... per
 * process (0 is never used); the tracer keeps the code object alive, so an id means one object. */
struct gt_rec_pycode {
    struct gt_rec_header h;
    uint64_t ts;
    uint32_t id;
    uint32_t first_line; /* co_firstlineno */
    uint32_t file_len;   /* bytes of co_filename (UTF-8) following the fixed part */
    uint32_t name_len;   /* bytes of co_qualname (3.11+; co_name before) following the file;
                          * padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_pycode) == 32, "gt_rec_pycode layout");

/* A loaded object (dl_iterate_phdr), written before the first node with an ip inside it. Its
 * mapped range is [start, start + size); base is the load bias: a file virtual address v of the
 * object is at base + v. A later record covering the same addresses replaces an earlier one. */
struct gt_rec_module {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t base;
    uint64_t start;
    uint64_t size;
    uint32_t path_len;     /* bytes of the path following (the executable's real path for the
                            * program itself; pseudo-names such as linux-vdso.so.1 as they are) */
    uint32_t build_id_len; /* bytes of the GNU build-id following the path, 0 if it has none */
    /* char path[path_len]; uint8_t build_id[build_id_len]; padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_module) == 48, "gt_rec_module layout");

/* A function name from dladdr for the ips of the trace's stacks (written at exit), the fallback
 * for a reader that cannot read the objects' symbol tables. It covers [addr, addr + size); size 0:
 * unknown size (assembly symbols). Names are as the dynamic symbol table has them (mangled). */
struct gt_rec_symbol {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t addr;
    uint64_t size;
    uint32_t name_len; /* bytes of the name following, padded to 8 */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_symbol) == 40, "gt_rec_symbol layout");

/* ---- GPU timeline (CUPTI) ------------------------------------------------------------------------
 * GPU records travel in GT_CHUNK_GPU chunks, in the order CUPTI delivered them (not time order).
 * Their times are CLOCK_MONOTONIC ns like host records: the shim registers a CUPTI timestamp
 * callback or, where that is refused, converts CUPTI's times itself before writing them;
 * gt_rec_cupti.clock_offset_ns records the offset it subtracted (a fact, not for readers to apply). */

enum gt_cupti_status {
    GT_CUPTI_ON = 0,          /* GPU records follow */
    GT_CUPTI_OFF_BY_USER = 1, /* GPUTRACE_CUPTI=off */
    GT_CUPTI_NOT_FOUND = 2,   /* no libcupti could be loaded */
    GT_CUPTI_OWNED = 3,       /* another profiler holds CUPTI (PyTorch profiler, Nsight, ...) */
    GT_CUPTI_FAILED = 4,      /* a CUPTI call failed; reason says which */
    GT_CUPTI_TAKEN = 5,       /* after GT_CUPTI_ON: another CUPTI client (torch.profiler's Kineto,
                               * ...) registered its activity callbacks; GPU records end here */
};

struct gt_rec_cupti {
    struct gt_rec_header h; /* sub = enum gt_cupti_status */
    uint64_t ts;
    int64_t clock_offset_ns; /* CUPTI clock - ours, already subtracted from GPU times; 0 when
                              * CUPTI used our clock through the timestamp callback */
    int32_t version;         /* cuptiGetVersion(), 0 if unknown */
    int32_t result;          /* CUptiResult of the call that failed, else 0 */
    uint32_t path_len;       /* bytes of the library path following */
    uint32_t reason_len;     /* bytes of the reason text following the path; padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_cupti) == 40, "gt_rec_cupti layout");

struct gt_rec_gpu_kernel {
    struct gt_rec_header h;
    uint64_t start, end;
    uint32_t corr; /* CUPTI correlation id of the launching driver call */
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t graph_id; /* 0 unless launched from a graph */
    uint32_t name_id;  /* gt_rec_gpu_name id, 0 = unknown */
    uint64_t graph_node_id;
};
_Static_assert(sizeof(struct gt_rec_gpu_kernel) == 56, "gt_rec_gpu_kernel layout");

struct gt_rec_gpu_memcpy {
    struct gt_rec_header h; /* sub = CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP ...) */
    uint64_t start, end;
    uint64_t bytes;
    uint32_t corr;
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint8_t src_kind, dst_kind; /* CUpti_ActivityMemoryKind */
    uint16_t flags;             /* CUpti_ActivityFlag bits (async) */
    uint32_t dst_device;        /* peer copies: the other device, else = device */
};
_Static_assert(sizeof(struct gt_rec_gpu_memcpy) == 56, "gt_rec_gpu_memcpy layout");

struct gt_rec_gpu_memset {
    struct gt_rec_header h;
    uint64_t start, end;
    uint64_t bytes;
    uint32_t corr;
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t value;
    uint32_t mem_kind;
};
_Static_assert(sizeof(struct gt_rec_gpu_memset) == 56, "gt_rec_gpu_memset layout");

struct gt_rec_gpu_extcorr {
    struct gt_rec_header h;
    uint64_t ext;  /* gt_rec_launch.corr of the host launch */
    uint32_t corr; /* CUPTI correlation id */
    uint32_t kind; /* CUpti_ExternalCorrelationKind used */
};
_Static_assert(sizeof(struct gt_rec_gpu_extcorr) == 24, "gt_rec_gpu_extcorr layout");

struct gt_rec_gpu_api {
    struct gt_rec_header h;
    uint64_t start, end;
    uint32_t corr;
    uint32_t tid;
    uint32_t cbid; /* CUpti_driver_api_trace_cbid */
    int32_t result;
};
_Static_assert(sizeof(struct gt_rec_gpu_api) == 40, "gt_rec_gpu_api layout");

struct gt_rec_gpu_name {
    struct gt_rec_header h;
    uint64_t ts;       /* 0 */
    uint32_t id;
    uint32_t name_len; /* bytes of the (mangled) name following, padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_gpu_name) == 24, "gt_rec_gpu_name layout");

struct gt_rec_gpu_dropped {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t count; /* cuptiActivityGetNumDroppedRecords since the previous report */
};
_Static_assert(sizeof(struct gt_rec_gpu_dropped) == 24, "gt_rec_gpu_dropped layout");

/* ---- framework allocators ----------------------------------------------------------------------
 * Written by the PyTorch bridge (python/gputrace_torch.py, through the shim's entry point
 * gputrace_torch_emit) on the Python thread that read the allocator, with the GIL held. Sizes in
 * bytes; `device` is the CUDA ordinal PyTorch uses. A snapshot is a TORCH_SNAP begin record, its
 * segments, each followed by its blocks in address order, and a TORCH_SNAP end record with the
 * same id: a snapshot without its end (a bridge failure, a cut file) is incomplete and readers
 * ignore it. Frames and stacks are interned: each written once, before the first record naming
 * it; id 0 = none. */
enum gt_torch_why {
    GT_TORCH_PERIODIC = 0, /* GPUTRACE_SAMPLE_MS elapsed */
    GT_TORCH_OOM = 1,      /* inside the out-of-memory observer, before PyTorch raises */
    GT_TORCH_PEAK = 2,     /* reserved memory reached a new high (rate-limited) */
    GT_TORCH_EXIT = 3,     /* the interpreter's atexit */
    GT_TORCH_START = 4     /* the bridge was installed */
};

struct gt_rec_torch_stats {
    struct gt_rec_header h;  /* sub = enum gt_torch_why */
    uint64_t ts;
    uint64_t allocated;      /* memory_stats: allocated_bytes.all.current */
    uint64_t allocated_peak; /* allocated_bytes.all.peak (= max_memory_allocated) */
    uint64_t reserved;       /* reserved_bytes.all.current */
    uint64_t reserved_peak;  /* reserved_bytes.all.peak (= max_memory_reserved) */
    uint64_t active;         /* active_bytes.all.current */
    uint64_t inactive_split; /* inactive_split_bytes.all.current: free bytes in split blocks */
    uint64_t requested;      /* requested_bytes.all.current (before rounding) */
    uint32_t alloc_retries;  /* num_alloc_retries */
    uint32_t ooms;           /* num_ooms */
    uint32_t segments;       /* segment.all.current */
    int32_t device;
};
_Static_assert(sizeof(struct gt_rec_torch_stats) == 88, "gt_rec_torch_stats layout");

enum gt_snap_op { GT_SNAP_BEGIN = 0, GT_SNAP_END = 1 };
#define GT_TORCH_HISTORY_OURS 1u /* flags: block-level history recorded at the bridge's request */
#define GT_TORCH_HISTORY_USER 2u /* flags: the program records history itself (its settings kept) */
#define GT_TORCH_EXPANDABLE   4u /* flags: some segment is expandable (expandable_segments:True) */
#define GT_TORCH_ASYNC        8u /* flags: backend cudaMallocAsync (no segments or blocks) */

#define GT_TORCH_ROUNDUP_INTERVALS 16 /* gt_rec_torch_snap.roundup_divisions */

struct gt_rec_torch_snap {
    struct gt_rec_header h; /* sub = enum gt_snap_op */
    uint64_t ts;
    uint32_t id;       /* 1, 2, ... per process */
    uint32_t why;      /* enum gt_torch_why */
    uint32_t segments; /* begin: segments that follow; end: segments written */
    uint32_t flags;    /* GT_TORCH_* */
    uint64_t blocks;   /* begin: blocks that follow; end: blocks written */
    /* appended: the allocator's max_split_size (allocator_settings: blocks at least this big are
     * never split); 0 = no limit, or a writer that did not say */
    uint64_t max_split_size;
    /* appended: the allocator's roundup_power2_divisions per size interval (allocator_settings):
     * [0] requests under 2 MiB, [k] those in [2^(20+k), 2^(21+k)) bytes, [15] from 32 GiB up; 0 or
     * 1 = rounded to 512 bytes (PyTorch's default), or a writer that did not say */
    uint32_t roundup_divisions[GT_TORCH_ROUNDUP_INTERVALS];
};
_Static_assert(sizeof(struct gt_rec_torch_snap) == 112, "gt_rec_torch_snap layout");

enum gt_torch_pool { GT_TORCH_POOL_LARGE = 0, GT_TORCH_POOL_SMALL = 1 };

struct gt_rec_torch_segment {
    struct gt_rec_header h; /* sub = enum gt_torch_pool */
    uint64_t ts;
    uint64_t addr;
    uint64_t size;       /* total_size */
    uint64_t allocated;  /* allocated_size */
    uint64_t active;     /* active_size */
    uint64_t requested;  /* requested_size */
    uint64_t stream;
    uint64_t pool_id;    /* segment_pool_id folded to 64 bits: 0 = the default pools (no graph) */
    uint32_t snap;       /* the snapshot's id */
    int32_t device;
    uint32_t blocks;     /* blocks that follow */
    uint32_t expandable; /* is_expandable */
};
_Static_assert(sizeof(struct gt_rec_torch_segment) == 88, "gt_rec_torch_segment layout");

enum gt_torch_block_state {
    GT_TORCH_INACTIVE = 0,        /* free for reuse */
    GT_TORCH_ACTIVE = 1,          /* active_allocated: a tensor's storage */
    GT_TORCH_AWAITING_FREE = 2,   /* active_pending_free: freed, another stream still uses it */
};

struct gt_rec_torch_block {
    struct gt_rec_header h; /* sub = enum gt_torch_block_state */
    uint64_t ts;
    uint64_t addr;
    uint64_t size;
    uint64_t requested; /* requested_size (0 when PyTorch did not say) */
    uint32_t stack;     /* gt_rec_torch_stack id of its allocation site (history only), 0 none */
    uint32_t snap;
};
_Static_assert(sizeof(struct gt_rec_torch_block) == 48, "gt_rec_torch_block layout");

struct gt_rec_torch_frame {
    struct gt_rec_header h;
    uint64_t ts;
    uint32_t id;       /* 1, 2, ... per process */
    uint32_t line;
    uint32_t file_len; /* bytes of the file name (UTF-8) following the fixed part */
    uint32_t name_len; /* bytes of the function name following the file; padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_torch_frame) == 32, "gt_rec_torch_frame layout");

struct gt_rec_torch_stack {
    struct gt_rec_header h;
    uint64_t ts;
    uint32_t id;         /* 1, 2, ... per process */
    uint32_t frames_len; /* bytes of the uint32_t frame ids following (innermost first), padded */
};
_Static_assert(sizeof(struct gt_rec_torch_stack) == 24, "gt_rec_torch_stack layout");

struct gt_rec_torch_oom {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t requested;   /* the observer's size: what "Tried to allocate" says */
    uint64_t limit;       /* the observer's third figure: device total, or the memory fraction's
                           * allowed maximum */
    uint64_t device_free; /* the observer's fourth figure (cudaMemGetInfo, "of which F is free") */
    uint64_t device_total; /* torch.cuda.mem_get_info()'s total, 0 unknown */
    uint64_t allocated;    /* memory_stats allocated_bytes.all.current in the observer */
    uint64_t reserved;     /* reserved_bytes.all.current in the observer */
    uint32_t snap;         /* id of the snapshot written right after, 0 none */
    int32_t device;
    uint32_t stack;        /* gt_rec_torch_stack id: the Python stack that allocated, 0 none */
    uint32_t fraction_set; /* 1: limit is a memory fraction's maximum (limit < device_total) */
};
_Static_assert(sizeof(struct gt_rec_torch_oom) == 80, "gt_rec_torch_oom layout");

/* What PyTorch's optimizers hold, read by the bridge after every optimizer step (a global
 * step post-hook, torch.optim.optimizer.register_optimizer_step_post_hook) and again right
 * before each snapshot: the parameters of its param_groups (weights), their .grad (gradients)
 * and the tensors of its state on a CUDA device (optimizer state), each by its storage
 * (data_ptr, nbytes: the caching allocator's block address and requested size), deduplicated
 * by storage. Every step writes one gt_rec_torch_step per device the optimizer's tensors are
 * on. When the set of storages changed since it was last written (a hash of addresses, sizes
 * and roles), the new set is written first: gt_rec_torch_roles records, the first with sub
 * GT_ROLES_FIRST (it replaces the optimizer's previous set), the others GT_ROLES_MORE; the set
 * is whole once set_entries entries arrived. */
enum gt_torch_role {
    GT_ROLE_WEIGHT = 0,          /* a parameter of param_groups */
    GT_ROLE_GRADIENT = 1,        /* a parameter's .grad */
    GT_ROLE_OPTIMIZER_STATE = 2, /* a CUDA tensor of optimizer.state[param] */
};
enum gt_roles_op { GT_ROLES_FIRST = 0, GT_ROLES_MORE = 1 };

struct gt_torch_role_entry {
    uint64_t addr;      /* untyped_storage().data_ptr() */
    uint64_t bytes;     /* untyped_storage().nbytes() */
    int32_t device;     /* CUDA ordinal */
    uint16_t elem_size; /* element_size() of the first tensor seen on this storage */
    uint8_t role;       /* enum gt_torch_role */
    uint8_t pad;
};
_Static_assert(sizeof(struct gt_torch_role_entry) == 24, "gt_torch_role_entry layout");

struct gt_rec_torch_roles {
    struct gt_rec_header h; /* sub = enum gt_roles_op */
    uint64_t ts;
    uint64_t step;          /* the optimizer's steps when the set was read */
    uint32_t optimizer;     /* 1, 2, ... per process, in the order of their first step */
    uint32_t entries_len;   /* bytes of gt_torch_role_entry following */
    uint32_t set_entries;   /* entries of the whole set (all its records) */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_torch_roles) == 40, "gt_rec_torch_roles layout");

struct gt_rec_torch_step {
    struct gt_rec_header h;
    uint64_t ts;
    uint64_t step;            /* steps of this optimizer so far, 1 first */
    uint64_t weights;         /* bytes of its roles on `device` (storage nbytes) */
    uint64_t gradients;
    uint64_t optimizer_state;
    uint64_t roles_hash;      /* of the whole set (all devices) */
    uint64_t allocated;       /* allocated_bytes.all.current (memory_stats), in the hook, or
                               * GT_TORCH_STEP_UNREAD */
    uint64_t reserved;        /* reserved_bytes.all.current, in the hook, or GT_TORCH_STEP_UNREAD */
    uint32_t optimizer;
    int32_t device;
    uint32_t weight_tensors;  /* storages of each role on `device` */
    uint32_t gradient_tensors;
    uint32_t state_tensors;
    uint32_t name_len;        /* bytes of the optimizer's class name following, padded to 8 */
};
_Static_assert(sizeof(struct gt_rec_torch_step) == 96, "gt_rec_torch_step layout");
/* allocated and reserved of a step whose hook did not read memory_stats: the bridge reads them
 * at an optimizer's first step, when its set changed, and otherwise once 200 times the last
 * read's own time has passed (python/gputrace_torch.py, STEP_STATS_COST_RATIO) */
#define GT_TORCH_STEP_UNREAD UINT64_MAX

/* PyTorch's own record of its allocator's events (`_snapshot()["device_traces"]`, kept while
 * history is recorded with enabled='all'), written right before each snapshot of the bridge:
 * the entries of one device since the last ones written, oldest first. Replayed from the
 * previous snapshot they give every block's lifetime and allocated memory at every event. */
enum gt_torch_trace_action {
    GT_TRACE_ALLOC = 0,
    GT_TRACE_FREE_REQUESTED = 1, /* the tensor was freed; its block may await other streams */
    GT_TRACE_FREE_COMPLETED = 2, /* the block is free: allocated memory drops here */
    GT_TRACE_SEGMENT_ALLOC = 3,
    GT_TRACE_SEGMENT_FREE = 4,
    GT_TRACE_SEGMENT_MAP = 5, /* expandable segments */
    GT_TRACE_SEGMENT_UNMAP = 6,
    GT_TRACE_OTHER = 7, /* snapshot, oom, an action this bridge does not know */
};
#define GT_TRACE_GAP 1u /* flags: entries before these were lost (PyTorch's ring buffer wrapped) */
/* flags: the device's first entries written, and it held no memory when the bridge began recording
 * them: they start from an empty device (the bridge's start sample covers the devices in use) */
#define GT_TRACE_FROM_EMPTY 2u

struct gt_torch_trace_entry {
    uint64_t time_us; /* PyTorch's time_us: microseconds of the realtime clock */
    uint64_t addr;
    uint64_t size;   /* as PyTorch records it (an alloc: the size asked for) */
    uint32_t stack;  /* gt_rec_torch_stack id of the entry's frames, 0 none */
    uint16_t action; /* enum gt_torch_trace_action */
    uint16_t pad;
};
_Static_assert(sizeof(struct gt_torch_trace_entry) == 32, "gt_torch_trace_entry layout");

struct gt_rec_torch_trace {
    struct gt_rec_header h;
    uint64_t ts;
    int32_t device;
    uint32_t entries_len; /* bytes of gt_torch_trace_entry following */
    uint32_t snap;        /* id of the snapshot written right after */
    uint32_t flags;       /* GT_TRACE_GAP, GT_TRACE_FROM_EMPTY */
};
_Static_assert(sizeof(struct gt_rec_torch_trace) == 32, "gt_rec_torch_trace layout");
/* ---- device state from NVML (written by the flusher thread, tid 0 chunks) ----------------------
 * The shim dlopens libnvidia-ml.so.1 (never linked) once CUDA's devices are known, finds each CUDA
 * device's NVML device by UUID, and samples every GPUTRACE_NVML_MS (default 100, 0 = off). */

/* gt_rec_nvml.h.sub */
enum gt_nvml_status {
    GT_NVML_DEVICE = 0,    /* device: this CUDA ordinal is NVML device nvml_index */
    GT_NVML_ABSENT = 1,    /* libnvidia-ml.so.1 could not be loaded (text: dlerror) */
    GT_NVML_FAILED = 2,    /* nvmlInit or a needed entry point failed (text: why) */
    GT_NVML_UNMATCHED = 3, /* device: no NVML device has this CUDA device's UUID */
};

struct gt_rec_nvml {
    struct gt_rec_header h; /* sub = gt_nvml_status */
    uint64_t ts;
    int32_t device;                   /* CUDA ordinal; -1 for ABSENT / FAILED */
    uint32_t nvml_index;              /* for GT_NVML_DEVICE */
    uint32_t max_sm_mhz, max_mem_mhz; /* nvmlDeviceGetMaxClockInfo; 0 unknown */
    uint32_t text_len;                /* bytes of text (no NUL) following, padded to 8 */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_nvml) == 40, "gt_rec_nvml layout");

/* gt_rec_nvml_sample.valid: which fields NVML answered (the others are 0). */
enum {
    GT_NVML_HAS_SM_CLOCK = 1u << 0,
    GT_NVML_HAS_MEM_CLOCK = 1u << 1,
    GT_NVML_HAS_TEMP = 1u << 2,
    GT_NVML_HAS_POWER = 1u << 3,
    GT_NVML_HAS_POWER_LIMIT = 1u << 4,
    GT_NVML_HAS_UTIL = 1u << 5,
    GT_NVML_HAS_REASONS = 1u << 6,
    GT_NVML_HAS_MEM_USED = 1u << 7,
};

struct gt_rec_nvml_sample {
    struct gt_rec_header h;
    uint64_t ts;                 /* before the first query */
    int32_t device;              /* CUDA ordinal */
    uint32_t valid;              /* GT_NVML_HAS_* */
    uint32_t sm_mhz, mem_mhz;    /* nvmlDeviceGetClockInfo (SM, MEM) */
    uint32_t temp_c;             /* nvmlDeviceGetTemperature (GPU) */
    uint32_t power_mw;           /* nvmlDeviceGetPowerUsage */
    uint32_t power_limit_mw;     /* nvmlDeviceGetEnforcedPowerLimit */
    uint32_t util_gpu, util_mem; /* nvmlDeviceGetUtilizationRates, percent */
    uint32_t pad;
    uint64_t reasons;  /* nvmlDeviceGetCurrentClocksEventReasons (nvmlClocksEventReason* bits) */
    uint64_t mem_used; /* nvmlDeviceGetMemoryInfo: used by all processes, bytes */
};
_Static_assert(sizeof(struct gt_rec_nvml_sample) == 72, "gt_rec_nvml_sample layout");

/* After a failed allocation on a device, the processes NVML lists on it, one record each; the
 * records of one listing share ts. */
struct gt_rec_nvml_proc {
    struct gt_rec_header h;
    uint64_t ts;       /* of the listing */
    int32_t device;    /* CUDA ordinal */
    uint32_t pid;      /* as NVML reports it (a pid of the host's namespace) */
    uint64_t bytes;    /* usedGpuMemory; UINT64_MAX: NVML_VALUE_NOT_AVAILABLE */
    uint32_t name_len; /* bytes of nvmlSystemGetProcessName (no NUL) following, padded to 8 */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_nvml_proc) == 40, "gt_rec_nvml_proc layout");

/* Host stack samples (GPUTRACE_SAMPLE_HZ): where a thread that made CUDA calls was, at a fixed
 * rate: walked by a signal handler (on CPU) or by the sampler thread (blocked), written by the
 * sampled thread itself later (its next hooked call or its exit). */
enum gt_sample_flags {
    GT_SAMPLE_ON_CPU = 1u << 0,  /* the thread's CPU time advanced >= half the interval */
    GT_SAMPLE_IN_HOOK = 1u << 1, /* inside the tracer's hook or the CUDA call it forwards */
    GT_SAMPLE_PARTIAL = 1u << 2, /* the walk stopped early (a frame the signal-safe walk skips,
                                  * or Python frames past the sample's bound on copies) */
};

struct gt_rec_host_sample {
    struct gt_rec_header h;
    uint64_t ts;          /* when the sampled thread wrote the record (the sort key) */
    uint64_t sample_ts;   /* when the sample was taken */
    uint64_t interval_ns; /* wall time since the thread's previous sample (its weight) */
    uint64_t cpu_ns;      /* thread CPU time consumed over that interval */
    uint32_t tid;
    uint32_t stack; /* stack node id of the interrupted frame, 0 none (GT_SAMPLE_IN_HOOK) */
    uint32_t flags; /* GT_SAMPLE_* */
    uint32_t pad;
};
_Static_assert(sizeof(struct gt_rec_host_sample) == 56, "gt_rec_host_sample layout");

/* Size of a record with `tail` bytes of variable data after a fixed part of `fixed` bytes. */
static inline uint32_t gt_rec_size(size_t fixed, size_t tail)
{
    return (uint32_t)((fixed + tail + 7u) & ~(size_t)7u);
}

#endif /* GPUTRACE_TRACE_FORMAT_H */
