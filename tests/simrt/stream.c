/* Streams, events, host functions and stream capture of the simulated runtime. cudaStream_t and
 * cudaEvent_t are the driver's handles; cudaStreamLegacy (1) and cudaStreamPerThread (2) are
 * CU_STREAM_LEGACY and CU_STREAM_PER_THREAD. Nothing is ever captured (the simulated driver has
 * no capture): queries say "not capturing" and cudaStreamBeginCapture is a stub. */
#include "srt.h"

#define SRT_CALL(expr)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = srt_ctx();                                                                \
        return e_ ? e_ : srt_ret(expr);                                                            \
    } while (0)

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *s)
{
    SRT_CALL(srt_drv.cuStreamCreate((CUstream *)s, 0));
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    SRT_CALL(srt_drv.cuStreamCreate((CUstream *)s, flags));
}

cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int prio)
{
    SRT_CALL(srt_drv.cuStreamCreateWithPriority((CUstream *)s, flags, prio));
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t s)
{
    SRT_CALL(srt_drv.cuStreamDestroy((CUstream)s));
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t s)
{
    SRT_CALL(srt_drv.cuStreamSynchronize(s));
}
cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t s)
{
    SRT_CALL(srt_drv.pt_cuStreamSynchronize(s));
}
cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t s)
{
    SRT_CALL(srt_drv.cuStreamQuery(s));
}
cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t s)
{
    SRT_CALL(srt_drv.pt_cuStreamQuery(s));
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned int flags)
{
    SRT_CALL(srt_drv.cuStreamWaitEvent(s, ev, flags));
}

cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t ev, unsigned int flags)
{
    SRT_CALL(srt_drv.pt_cuStreamWaitEvent(s, ev, flags));
}

cudaError_t CUDARTAPI cudaStreamGetPriority(cudaStream_t s, int *prio)
{
    SRT_CALL(srt_drv.cuStreamGetPriority(s, prio));
}
cudaError_t CUDARTAPI cudaStreamGetPriority_ptsz(cudaStream_t s, int *prio)
{
    SRT_CALL(srt_drv.pt_cuStreamGetPriority(s, prio));
}
cudaError_t CUDARTAPI cudaStreamGetFlags(cudaStream_t s, unsigned int *f)
{
    SRT_CALL(srt_drv.cuStreamGetFlags(s, f));
}
cudaError_t CUDARTAPI cudaStreamGetFlags_ptsz(cudaStream_t s, unsigned int *f)
{
    SRT_CALL(srt_drv.pt_cuStreamGetFlags(s, f));
}
cudaError_t CUDARTAPI cudaStreamGetId(cudaStream_t s, unsigned long long *id)
{
    SRT_CALL(srt_drv.cuStreamGetId(s, id));
}
cudaError_t CUDARTAPI cudaStreamGetId_ptsz(cudaStream_t s, unsigned long long *id)
{
    SRT_CALL(srt_drv.pt_cuStreamGetId(s, id));
}
cudaError_t CUDARTAPI cudaStreamGetDevice(cudaStream_t s, int *dev)
{
    SRT_CALL(srt_drv.cuStreamGetDevice(s, dev));
}
cudaError_t CUDARTAPI cudaStreamGetDevice_ptsz(cudaStream_t s, int *dev)
{
    SRT_CALL(srt_drv.pt_cuStreamGetDevice(s, dev));
}

cudaError_t CUDARTAPI cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void *arg,
                                            unsigned int flags)
{
    SRT_CALL(srt_drv.cuStreamAddCallback(s, (CUstreamCallback)cb, arg, flags));
}

cudaError_t CUDARTAPI cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t cb, void *arg,
                                                 unsigned int flags)
{
    SRT_CALL(srt_drv.pt_cuStreamAddCallback(s, (CUstreamCallback)cb, arg, flags));
}

cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *arg)
{
    SRT_CALL(srt_drv.cuLaunchHostFunc(s, fn, arg));
}

cudaError_t CUDARTAPI cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t fn, void *arg)
{
    SRT_CALL(srt_drv.pt_cuLaunchHostFunc(s, fn, arg));
}

static cudaError_t capture_status(int pt, cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    if (!st) return srt_err(cudaErrorInvalidValue);
    cudaError_t e = srt_ctx();
    if (e) return e;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = SRT_PT(pt, cuStreamIsCapturing)(s, &cs);
    *st = (enum cudaStreamCaptureStatus)cs;
    return srt_ret(r);
}

cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    return capture_status(0, s, st);
}

cudaError_t CUDARTAPI cudaStreamIsCapturing_ptsz(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    return capture_status(1, s, st);
}

cudaError_t CUDARTAPI cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus *st,
                                               unsigned long long *id, cudaGraph_t *graph,
                                               const cudaGraphNode_t **deps,
                                               const cudaGraphEdgeData **edges, size_t *ndeps)
{
    cudaError_t e = capture_status(0, s, st);
    if (e) return e;
    if (id) *id = 0;
    if (graph) *graph = NULL;
    if (deps) *deps = NULL;
    if (edges) *edges = NULL;
    if (ndeps) *ndeps = 0;
    return cudaSuccess;
}

/* The mode only matters to a capture; keep each thread's value so exchanges round-trip. */
static __thread enum cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (!mode) return srt_err(cudaErrorInvalidValue);
    enum cudaStreamCaptureMode old = t_capture_mode;
    t_capture_mode = *mode;
    *mode = old;
    return cudaSuccess;
}

/* ---- events -----------------------------------------------------------------------------------
 */

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *ev)
{
    SRT_CALL(srt_drv.cuEventCreate((CUevent *)ev, 0));
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned int flags)
{
    SRT_CALL(srt_drv.cuEventCreate((CUevent *)ev, flags));
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t ev)
{
    SRT_CALL(srt_drv.cuEventDestroy(ev));
}
cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t ev)
{
    SRT_CALL(srt_drv.cuEventQuery(ev));
}
cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t ev)
{
    SRT_CALL(srt_drv.cuEventSynchronize(ev));
}
cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    SRT_CALL(srt_drv.cuEventRecord(ev, s));
}
cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t ev, cudaStream_t s)
{
    SRT_CALL(srt_drv.pt_cuEventRecord(ev, s));
}

cudaError_t CUDARTAPI cudaEventRecordWithFlags(cudaEvent_t ev, cudaStream_t s, unsigned int flags)
{
    SRT_CALL(srt_drv.cuEventRecordWithFlags(ev, s, flags));
}

cudaError_t CUDARTAPI cudaEventRecordWithFlags_ptsz(cudaEvent_t ev, cudaStream_t s,
                                                    unsigned int flags)
{
    SRT_CALL(srt_drv.pt_cuEventRecordWithFlags(ev, s, flags));
}

cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    SRT_CALL(srt_drv.cuEventElapsedTime(ms, a, b));
}
