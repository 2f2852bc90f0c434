"""gputrace's PyTorch allocator bridge (loaded by libgputrace.so; not imported by programs).

The shim loads this file into a traced interpreter once torch's CUDA allocator is live (a pending
call on the main thread, holding the GIL; preload/torch.c) and calls install(emit, level,
sample_ms). From then on it writes PyTorch's own view of its memory into the trace, as records
of include/gputrace/trace_format.h ("framework allocators") packed here and handed to `emit`:

  - at every allocator out-of-memory (an observer attached with
    torch._C._cuda_attach_out_of_memory_observer, called by PyTorch before it raises): a
    TORCH_OOM record with the observer's figures and memory_stats(), then (level snapshots and
    up) a full torch.cuda.memory._snapshot();
  - memory_stats() samples (tick(), every GPUTRACE_SAMPLE_MS, asked by the shim's flusher);
  - snapshots when reserved memory reaches a new high (at most one per PEAK_MIN_S, and only
    after PEAK_GROWTH more), and at exit (atexit);
  - a snapshot at a sample that finds allocated memory at its all-time high
    (allocated_bytes.all.current == .peak, i.e. max_memory_allocated()) above every snapshot
    written for that device: that snapshot holds the very blocks of the peak, so the report's
    breakdown of the peak by Python line is exact. Spaced by ALLOC_SNAP_COST_RATIO times the
    last one's own duration on this thread (each costs more than the last while blocks
    accumulate, and the shim's flusher compresses the records besides: the worst case, memory
    growing at every sample, is measured in bench/RESULTS.md);
  - level history: block-level history with Python stacks (_record_memory_history
    enabled='state', context='alloc', stacks='python'), unless the program records history
    itself: then its settings are left alone and its frames used.

Nothing here may change the program: every entry point catches everything, writes a note into
the trace and goes on; the program's own OOM observers are untouched (PyTorch keeps a list);
no thread is started.
"""
import struct
import sys
import time

PEAK_MIN_S = 1.0  # at most one peak snapshot per second
PEAK_GROWTH = 1.10  # and only when reserved grew by 10 % over the last one
ALLOC_SNAP_COST_RATIO = 50  # allocated-high snapshots: next one after 50x the last one's time
STACK_MAX = 24  # frames kept per block stack, innermost first

# record types and enums (include/gputrace/trace_format.h)
_NOTE, _STATS, _SNAP, _SEGMENT, _BLOCK, _FRAME, _STACK, _OOM = 33, 60, 61, 62, 63, 64, 65, 66
_PERIODIC, _WHY_OOM, _PEAK, _EXIT, _START = 0, 1, 2, 3, 4
_HISTORY_OURS, _HISTORY_USER, _EXPANDABLE, _ASYNC = 1, 2, 4, 8
_STATES = {"inactive": 0, "active_allocated": 1, "active_pending_free": 2}
_MASK64 = (1 << 64) - 1

_S = None  # the bridge's state once installed


class _State:
    def __init__(self, torch, emit, level, sample_ms):
        self.torch = torch
        self.emit = emit
        self.level = level
        self.sample_ms = sample_ms
        self.frames = {}  # (file, line, name) -> id
        self.stacks = {}  # tuple of frame ids -> id
        self.snap_id = 0
        self.peak_snap_reserved = 0
        self.peak_snap_time = 0.0
        self.snap_allocated = {}  # device -> most allocated bytes in a snapshot written
        self.alloc_snap_next = 0.0  # monotonic time before which no allocated-high snapshot
        self.devices = set()
        self.history = 0  # _HISTORY_* flags
        self.async_backend = False
        self.closed = False
        self.failures = 0


def _pad(b):
    return b + b"\0" * (-len(b) % 8)


def _rec(fmt, type_, sub, *fields):
    size = struct.calcsize("<HHIQ" + fmt)
    return struct.pack("<HHIQ" + fmt, type_, sub, size, 0, *fields)


def _note(text, warning=True):
    s = _S
    if s is None or s.closed:
        return
    try:
        t = text.encode("utf-8", "replace")[:4000]
        body = _pad(struct.pack("<QII", 0, 1 if warning else 0, len(t)) + t)
        s.emit(struct.pack("<HHI", _NOTE, 0, 8 + len(body)) + body)
    except Exception:
        pass


def _failed(where, exc):
    s = _S
    if s is not None:
        s.failures += 1
        if s.failures <= 5:  # a broken bridge must not fill the trace with notes
            _note("PyTorch bridge: %s failed: %s: %s" % (where, type(exc).__name__, exc))


# ---- interning -------------------------------------------------------------------------------

def _frame_id(s, out, file, line, name):
    key = (file, line, name)
    fid = s.frames.get(key)
    if fid is None:
        fid = len(s.frames) + 1
        s.frames[key] = fid
        fb = file.encode("utf-8", "replace")[:4096]
        nb = name.encode("utf-8", "replace")[:4096]
        body = _pad(struct.pack("<QIIII", 0, fid, max(0, int(line)), len(fb), len(nb)) + fb + nb)
        out += struct.pack("<HHI", _FRAME, 0, 8 + len(body)) + body
    return fid


def _stack_id(s, out, frames):
    """frames: innermost first, (file, line, name) each; 0 for none."""
    if not frames:
        return 0
    ids = tuple(_frame_id(s, out, f, l, n) for f, l, n in frames[:STACK_MAX])
    sid = s.stacks.get(ids)
    if sid is None:
        sid = len(s.stacks) + 1
        s.stacks[ids] = sid
        arr = struct.pack("<%dI" % len(ids), *ids)
        body = _pad(struct.pack("<QII", 0, sid, len(arr)) + arr)
        out += struct.pack("<HHI", _STACK, 0, 8 + len(body)) + body
    return sid


def _snapshot_frames(frames):
    """A snapshot's frames (dicts, innermost first) as (file, line, name) tuples."""
    return [(f.get("filename", "?"), f.get("line", 0), f.get("name", "?")) for f in frames or ()]


def _python_stack():
    """The calling Python stack, innermost first, without this module's frames."""
    out = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if code.co_filename != __file__:
            out.append((code.co_filename, f.f_lineno or 0, code.co_name))
        f = f.f_back
    return out


# ---- records ---------------------------------------------------------------------------------

def _stats_rec(s, device, why):
    st = s.torch.cuda.memory_stats(device)
    g = st.get
    return _rec("QQQQQQQIIIi", _STATS, why,
                g("allocated_bytes.all.current", 0), g("allocated_bytes.all.peak", 0),
                g("reserved_bytes.all.current", 0), g("reserved_bytes.all.peak", 0),
                g("active_bytes.all.current", 0), g("inactive_split_bytes.all.current", 0),
                g("requested_bytes.all.current", 0),
                min(g("num_alloc_retries", 0), 0xffffffff), min(g("num_ooms", 0), 0xffffffff),
                min(g("segment.all.current", 0), 0xffffffff), device), st


def _pool_id(p):
    if isinstance(p, (tuple, list)) and len(p) == 2:
        return ((int(p[0]) << 32) ^ int(p[1])) & _MASK64
    return 0


def _snapshots_on(s):
    return s.level in ("snapshots", "history") and not s.async_backend


def _next_snap_id(s):
    s.snap_id += 1
    return s.snap_id


def _write_snapshot(s, why, sid=0):
    """One full snapshot, with id sid (0: the next one); returns its id (0: none written)."""
    if not _snapshots_on(s):
        return 0
    snap = s.torch.cuda.memory._snapshot()
    segs = snap.get("segments", [])
    sid = sid or _next_snap_id(s)
    flags = s.history
    nblocks = sum(len(g.get("blocks", ())) for g in segs)
    if any(g.get("is_expandable") for g in segs):
        flags |= _EXPANDABLE
    out = bytearray()
    out += _rec("IIIIQ", _SNAP, 0, sid, why, len(segs), flags, nblocks)
    for g in segs:
        blocks = g.get("blocks", ())
        pool = 1 if g.get("segment_type") == "small" else 0
        out += _rec("QQQQQQQIiII", _SEGMENT, pool, g.get("address", 0) & _MASK64,
                    g.get("total_size", 0), g.get("allocated_size", 0), g.get("active_size", 0),
                    g.get("requested_size", 0), g.get("stream", 0) & _MASK64,
                    _pool_id(g.get("segment_pool_id")), sid, g.get("device", 0), len(blocks),
                    1 if g.get("is_expandable") else 0)
        for b in blocks:
            stack = _stack_id(s, out, _snapshot_frames(b.get("frames")))
            out += _rec("QQQII", _BLOCK, _STATES.get(b.get("state"), 0),
                        b.get("address", 0) & _MASK64, b.get("size", 0),
                        b.get("requested_size", 0), stack, sid)
    out += _rec("IIIIQ", _SNAP, 1, sid, why, len(segs), flags, nblocks)
    s.emit(bytes(out))
    allocated = {}
    for g in segs:
        d = g.get("device", 0)
        allocated[d] = allocated.get(d, 0) + g.get("allocated_size", 0)
    for d, n in allocated.items():
        s.snap_allocated[d] = max(s.snap_allocated.get(d, 0), n)
    return sid


def _sample(s, why):
    for d in sorted(s.devices):
        rec, st = _stats_rec(s, d, why)
        s.emit(rec)
        reserved = st.get("reserved_bytes.all.current", 0)
        now = time.monotonic()
        if (why == _PERIODIC and reserved > s.peak_snap_reserved * PEAK_GROWTH and
                now - s.peak_snap_time >= PEAK_MIN_S):
            s.peak_snap_reserved = reserved
            s.peak_snap_time = now
            _write_snapshot(s, _PEAK)
        allocated = st.get("allocated_bytes.all.current", 0)
        if (why == _PERIODIC and allocated == st.get("allocated_bytes.all.peak", 0) and
                allocated > s.snap_allocated.get(d, 0) and now >= s.alloc_snap_next):
            _write_snapshot(s, _PEAK)
            s.alloc_snap_next = now + ALLOC_SNAP_COST_RATIO * (time.monotonic() - now)


# ---- entry points ----------------------------------------------------------------------------

def _on_oom(device, requested, limit, device_free):
    """PyTorch's OOM observer: called before it raises, with the allocator's lock released."""
    s = _S
    if s is None or s.closed:
        return
    try:
        torch = s.torch
        s.devices.add(int(device))
        st = torch.cuda.memory_stats(device)
        total = torch.cuda.get_device_properties(device).total_memory
        out = bytearray()
        stack = _stack_id(s, out, _python_stack())
        # the id is taken now: another thread's snapshot may come between the two emits
        snap_next = _next_snap_id(s) if _snapshots_on(s) else 0
        out += _rec("QQQQQQIiII", _OOM, 0, requested, limit, device_free, total,
                    st.get("allocated_bytes.all.current", 0),
                    st.get("reserved_bytes.all.current", 0), snap_next, device, stack,
                    1 if limit < total else 0)
        out += _stats_rec(s, device, _WHY_OOM)[0]
        s.emit(bytes(out))
        if snap_next:
            _write_snapshot(s, _WHY_OOM, snap_next)
    except Exception as e:  # never into PyTorch's OOM path
        _failed("the OOM observer", e)


def tick():
    """A periodic sample (the shim's flusher asks for it as a pending call)."""
    s = _S
    if s is None or s.closed:
        return
    try:
        s.devices.add(s.torch.cuda.current_device())
        _sample(s, _PERIODIC)
    except Exception as e:
        _failed("a memory_stats sample", e)


def _at_exit():
    s = _S
    if s is None or s.closed:
        return
    try:
        _sample(s, _EXIT)
        _write_snapshot(s, _EXIT)
    except Exception as e:
        _failed("the exit snapshot", e)
    s.closed = True
    try:
        s.emit(b"")  # the shim queues no more samples
    except Exception:
        pass


def install(emit, level, sample_ms):
    """Called by the shim on the main thread. True: installed; False: not yet (ask again)."""
    global _S
    torch = sys.modules.get("torch")
    if _S is not None:
        return True
    if torch is None or not hasattr(torch, "cuda") or not torch.cuda.is_initialized():
        return False
    s = _State(torch, emit, level, int(sample_ms))
    _S = s
    try:
        import atexit
        s.async_backend = torch.cuda.get_allocator_backend() != "native"
        if s.async_backend:
            s.history |= _ASYNC
        s.devices.add(torch.cuda.current_device())
        user_history = False
        if not s.async_backend:  # cudaMallocAsync keeps no history (and raises if asked)
            user_history = bool(getattr(torch._C, "_cuda_isHistoryEnabled", lambda: False)())
        if user_history:
            s.history |= _HISTORY_USER
            _note("PyTorch bridge: the program records allocator history itself; its settings "
                  "are kept and its frames used", warning=False)
        elif level == "history" and not s.async_backend:
            torch.cuda.memory._record_memory_history(enabled="state", context="alloc",
                                                     stacks="python")
            s.history |= _HISTORY_OURS
        try:
            torch._C._cuda_attach_out_of_memory_observer(_on_oom)
        except Exception as e:
            if s.async_backend:  # cudaMallocAsync takes no observers
                _note("PyTorch bridge: backend cudaMallocAsync takes no OOM observer: its OOMs "
                      "are seen at the driver (cuMemAllocAsync) only", warning=False)
            else:
                _failed("attaching the OOM observer", e)
        atexit.register(_at_exit)
        _sample(s, _START)
        _note("PyTorch bridge installed: level %s, backend %s, torch %s" %
              (level, torch.cuda.get_allocator_backend(), torch.__version__), warning=False)
    except Exception as e:
        _failed("install", e)
    return True
