"""gputrace's PyTorch allocator bridge (loaded by libgputrace.so; not imported by programs).

The shim loads this file into a traced interpreter once torch's CUDA allocator is live (a pending
call on the main thread, holding the GIL; preload/torch.c) and calls install(emit, level,
sample_ms). From then on it writes PyTorch's own view of its memory into the trace, as records
of include/gputrace/trace_format.h ("framework allocators") packed here and handed to `emit`:

  - at every allocator out-of-memory (an observer attached with
    torch._C._cuda_attach_out_of_memory_observer, called by PyTorch before it raises): a
    TORCH_OOM record with the observer's figures and memory_stats(), then (level snapshots and
    up) a full torch.cuda.memory._snapshot();
  - memory_stats() samples (tick(), every GPUTRACE_SAMPLE_MS, asked by the shim's flusher) of
    the current device and of every device PyTorch has reserved memory on;
  - snapshots when reserved or allocated memory reaches a new high (at most one per PEAK_MIN_S,
    and only after PEAK_GROWTH more than at the last one), and at exit (atexit, or os._exit,
    where the shim calls exit_flush: preload/exit.c);
  - a snapshot at a sample that finds allocated memory at its all-time high
    (allocated_bytes.all.current == .peak, i.e. max_memory_allocated()) above every snapshot
    written for that device: that snapshot holds the very blocks of the peak, so the report's
    breakdown of the peak by Python line is exact. Spaced by ALLOC_SNAP_COST_RATIO times the
    last one's own duration on this thread (each costs more than the last while blocks
    accumulate, and the shim's flusher compresses the records besides: the worst case, memory
    growing at every sample, is measured in bench/RESULTS.md);
  - level history: block-level history with Python stacks (_record_memory_history
    enabled='all', context='alloc', stacks='python', max_entries=TRACE_MAX), unless the program
    records history itself: then its settings are left alone and its frames used; before each
    snapshot, the allocator's events since the last ones written (device_traces: TORCH_TRACE
    records), so the report can replay every block's lifetime between snapshots;
  - after every optimizer step (a global step post-hook, any optimizer, levels stats and up):
    the storages its param_groups' parameters (weights), their .grad (gradients) and its state's
    CUDA tensors (optimizer state) occupy: a TORCH_STEP record per device with the bytes of each
    role, preceded by the whole set (TORCH_ROLES records) when a hash of it changed, and
    allocated and reserved bytes (memory_stats) when read at that step: at an optimizer's first
    step, when its set changed, and otherwise once STEP_STATS_COST_RATIO times the last read's
    own time has passed since it (the read takes 8-50 us: every step of a training job whose
    steps last 50 ms or more is read, of a launch-bound one of 1 ms about every 30th); UNREAD
    (2^64 - 1) at the others. The set's fingerprint (data pointers, _fingerprint) is taken at
    every step, and the records of a step that reads nothing are the last ones with the step's
    number written over (bench/torch_step_hook.py times the hook alone).

Nothing here may change the program: every entry point catches everything, writes a note into
the trace and goes on; the program's own OOM observers are untouched (PyTorch keeps a list);
no thread is started.
"""
import operator
import struct
import sys
import time
import weakref
from itertools import chain

_GRAD = operator.attrgetter("grad")
_chain = chain.from_iterable

PEAK_MIN_S = 1.0  # at most one peak snapshot per second
PEAK_GROWTH = 1.10  # and only when reserved or allocated grew by 10 % over the last one
ALLOC_SNAP_COST_RATIO = 50  # allocated-high snapshots: next one after 50x the last one's time
STEP_STATS_COST_RATIO = 1000  # step hook: memory_stats read at most 0.1 % of the time
STACK_MAX = 24  # frames kept per block stack, innermost first
TRACE_MAX = 100000  # PyTorch's ring buffer of allocator events (level history)
TRACE_PER_REC = 30000  # 32-byte entries: records stay under the shim's 1 MiB bound
TRACE_TAIL = 8  # the last events written, found again in the next snapshot's events
TRACE_ROUND_US = 2  # a listed event's time moves by rounding between two snapshots (seen: 1 us)
TRACE_SLEW_PPM = 1000  # and by at most this share of the time between them (NTP's slewing)

# record types and enums (include/gputrace/trace_format.h)
_NOTE, _STATS, _SNAP, _SEGMENT, _BLOCK, _FRAME, _STACK, _OOM = 33, 60, 61, 62, 63, 64, 65, 66
_ROLES, _STEP, _TRACE = 80, 81, 82
_ACTIONS = {"alloc": 0, "free_requested": 1, "free_completed": 2, "segment_alloc": 3,
            "segment_free": 4, "segment_map": 5, "segment_unmap": 6}
_TRACE_OTHER, _TRACE_GAP, _TRACE_FROM_EMPTY = 7, 1, 2
_WEIGHT, _GRADIENT, _OPT_STATE = 0, 1, 2
_ROLES_PER_REC = 40000  # 24-byte entries: records stay under the shim's 1 MiB bound
_PERIODIC, _WHY_OOM, _PEAK, _EXIT, _START = 0, 1, 2, 3, 4
_HISTORY_OURS, _HISTORY_USER, _EXPANDABLE, _ASYNC = 1, 2, 4, 8
_STATES = {"inactive": 0, "active_allocated": 1, "active_pending_free": 2}
_MASK64 = (1 << 64) - 1
_UNREAD = _MASK64  # a TORCH_STEP's allocated and reserved when not read at that step

_S = None  # the bridge's state once installed


class _State:
    def __init__(self, torch, emit, level, sample_ms):
        self.torch = torch
        self.data_ptr = torch.Tensor.data_ptr
        self.emit = emit
        self.level = level
        self.sample_ms = sample_ms
        self.frames = {}  # (file, line, name) -> id
        self.stacks = {}  # tuple of frame ids -> id
        self.snap_id = 0
        self.peak_snap_reserved = 0
        self.peak_snap_allocated = 0
        self.peak_snap_time = 0.0
        self.snap_allocated = {}  # device -> most allocated bytes in a snapshot written
        self.alloc_snap_next = 0.0  # monotonic time before which no allocated-high snapshot
        self.devices = set()
        self.history = 0  # _HISTORY_* flags
        self.async_backend = False
        self.closed = False
        # >0 while the bridge writes a snapshot or its exit records (the step hook does not
        # count): tick() is a pending call, which CPython runs between any two bytecodes of the
        # main thread, also inside those; its own snapshot there would come between a
        # snapshot's events and its blocks, or take the events the exit snapshot is writing
        self.busy = 0
        self.failures = 0
        self.optimizers = {}  # id(optimizer) -> _optimizer_entry's list
        self.opt_count = 0
        self.step_hook = None
        self.trace_tail = {}  # device -> keys of the last TRACE_TAIL events written
        self.trace_len = {}  # device -> how many events its last snapshot listed
        self.ndev = 0  # torch.cuda.device_count()
        self.empty_at_start = set()  # devices holding no memory when our history began
        self.trace_tail_seen = set()  # devices whose events were written at least once


def _pad(b):
    return b + b"\0" * (-len(b) % 8)


def _rec(fmt, type_, sub, *fields):
    size = struct.calcsize("<HHIQ" + fmt)
    return struct.pack("<HHIQ" + fmt, type_, sub, size, 0, *fields)


def _rec_tail(fmt, type_, sub, tail, *fields):
    """A record whose fixed part is followed by `tail` (padded to 8)."""
    tail = _pad(tail)
    size = struct.calcsize("<HHIQ" + fmt) + len(tail)
    return struct.pack("<HHIQ" + fmt, type_, sub, size, 0, *fields) + tail


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

_STATS_KEYS = ("allocated_bytes.all.current", "allocated_bytes.all.peak",
               "reserved_bytes.all.current", "reserved_bytes.all.peak", "active_bytes.all.current",
               "inactive_split_bytes.all.current", "requested_bytes.all.current",
               "num_alloc_retries", "num_ooms", "segment.all.current")


def _memory_stats(s, device):
    """The memory_stats() figures the records use, as memory_stats() names them, read from
    memory_stats_as_nested_dict(): memory_stats() flattens and sorts that whole dict in Python
    (137 us on the simulated stack against 22 us)."""
    nested, st = s.torch.cuda.memory_stats_as_nested_dict(device), {}
    for key in _STATS_KEYS:
        v = nested
        for part in key.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if isinstance(v, int):
            st[key] = v
    return st


def _stats_rec(s, device, why):
    st = _memory_stats(s, device)
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


def _trace_key(e):
    return (e.get("time_us", 0), e.get("action"), e.get("addr", 0), e.get("size", 0))


def _tail_shift(events, i, tail):
    """How far in time events[i:i + len(tail)] are from the tail's (the largest difference, us),
    or None where they are other events (an action, address or size differs)."""
    worst = 0
    for e, k in zip(events[i:i + len(tail)], tail):
        if (e.get("action"), e.get("addr", 0), e.get("size", 0)) != k[1:]:
            return None
        worst = max(worst, abs(e.get("time_us", 0) - k[0]))
    return worst


def _new_events(s, device, events):
    """The events after the last ones written for device, and whether some were lost (the last
    ones written are no longer among them: PyTorch's ring buffer wrapped, or the history was
    cleared).

    The last TRACE_TAIL events written are looked for by action, address and size, with their
    times close: PyTorch converts its events' clock readings to microseconds anew at every
    snapshot (c10's ApproximateClockToUnixTimeConverter measures the counter's rate against
    CLOCK_REALTIME again), so an event can come back 1 us off by rounding (seen in 0.2% of
    snapshots for the newest events), or further where NTP slews the clock between the two
    snapshots: at most TRACE_SLEW_PPM of the time since (the kernel slews by at most 500 ppm).
    The same blocks made and freed in the same order again (a training loop) repeat a window of
    events, but later by at least a loop's time, which that bound leaves out unless the loop
    is very fast; then the nearest match wins, and a wrong one most likely ends off the
    snapshot's state (the replay counts the batch as inconsistent). A clock step reads as a
    gap."""
    tail = s.trace_tail.get(device)
    if not tail or not events:  # (no events: nothing to write; the next list is checked)
        return events, False
    n = len(tail)
    since = max(0, events[-1].get("time_us", 0) - tail[-1][0])
    limit = TRACE_ROUND_US + since * TRACE_SLEW_PPM // 1_000_000
    # Until the ring wraps, PyTorch only appends: the tail ends where the last list ended.
    end = s.trace_len.get(device, 0)
    if n <= end <= len(events):
        shift = _tail_shift(events, end - n, tail)
        if shift is not None and shift <= TRACE_ROUND_US:
            return events[end:], False
    # Wrapped (older events dropped from the front), cleared, or the times moved: the match
    # nearest in time within the limit.
    best, at = None, -1
    for i in range(len(events) - n, -1, -1):
        shift = _tail_shift(events, i, tail)
        if shift is not None and shift <= limit and (best is None or shift < best):
            best, at = shift, i
            if not shift:
                break
    if best is None:
        return events, True
    return events[at + n:], False


def _trace_written(s, device, events):
    """What _new_events looks for at the next snapshot, once events (device's list in this
    one) are written: their last TRACE_TAIL keys and the list's length."""
    if events:
        s.trace_tail[device] = tuple(_trace_key(e) for e in events[-TRACE_TAIL:])
    s.trace_len[device] = len(events)


def _trace_recs(s, snap, sid, out):
    """TORCH_TRACE records of every device's new events, for the snapshot sid."""
    for device, events in enumerate(snap.get("device_traces") or ()):
        new, gap = _new_events(s, device, events)
        _trace_written(s, device, events)
        # a device that held nothing when our history began: its first events start from zero
        first = device in s.empty_at_start and device not in s.trace_tail_seen
        s.trace_tail_seen.add(device)
        for k in range(0, len(new), TRACE_PER_REC):
            ents = bytearray()
            for e in new[k:k + TRACE_PER_REC]:
                action = _ACTIONS.get(e.get("action"), _TRACE_OTHER)
                stack = _stack_id(s, out, _snapshot_frames(e.get("frames"))) if action == 0 else 0
                ents += struct.pack("<QQQIHH", e.get("time_us", 0) & _MASK64,
                                    e.get("addr", 0) & _MASK64, e.get("size", 0) & _MASK64,
                                    stack, action, 0)
            flags = (_TRACE_GAP if gap else 0) | (_TRACE_FROM_EMPTY if first else 0)
            out += _rec_tail("iIII", _TRACE, 0, bytes(ents), device, len(ents), sid,
                             flags if k == 0 else 0)


def _max_split(snap):
    """The allocator's max_split_size (PyTorch 2.5+ says it in the snapshot); 0: no limit (its
    default, SIZE_MAX) or not said."""
    try:
        n = int((snap.get("allocator_settings") or {}).get("max_split_size", 0))
    except Exception:
        return 0
    return n if 0 < n < _MASK64 else 0


_ROUNDUP_INTERVALS = 16  # GT_TORCH_ROUNDUP_INTERVALS


def _roundup(snap):
    """The allocator's roundup_power2_divisions per size interval, as PyTorch parsed them from
    PYTORCH_CUDA_ALLOC_CONF (both forms: one number, or a list per interval with its '>' rule):
    allocator_settings says them as {interval start in MiB: divisions}, "1" to "32768". Read from
    the snapshot, not from the environment, so the replay rounds with PyTorch's own table. Zeros
    where not said (the default, and a PyTorch without them)."""
    out = [0] * _ROUNDUP_INTERVALS
    try:
        for k, v in ((snap.get("allocator_settings") or {}).get("roundup_power2_divisions")
                     or {}).items():
            i = int(k).bit_length() - 1
            if 0 <= i < _ROUNDUP_INTERVALS and 0 <= int(v) <= 0xffffffff:
                out[i] = int(v)
    except Exception:
        return [0] * _ROUNDUP_INTERVALS
    return out


def _write_snapshot(s, why, sid=0):
    """One full snapshot, with id sid (0: the next one); returns its id (0: none written)."""
    if not _snapshots_on(s):
        return 0
    s.busy += 1
    try:
        return _write_snapshot_now(s, why, sid)
    finally:
        s.busy -= 1


def _write_snapshot_now(s, why, sid):
    try:
        _refresh_roles(s)
    except Exception as e:
        _failed("reading the optimizers' tensors", e)
    snap = s.torch.cuda.memory._snapshot()
    segs = snap.get("segments", [])
    sid = sid or _next_snap_id(s)
    flags = s.history
    nblocks = sum(len(g.get("blocks", ())) for g in segs)
    if any(g.get("is_expandable") for g in segs):
        flags |= _EXPANDABLE
    out = bytearray()
    _trace_recs(s, snap, sid, out)
    settings = [_max_split(snap)] + _roundup(snap)
    out += _rec("IIIIQQ16I", _SNAP, 0, sid, why, len(segs), flags, nblocks, *settings)
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
    out += _rec("IIIIQQ16I", _SNAP, 1, sid, why, len(segs), flags, nblocks, *settings)
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
        allocated = st.get("allocated_bytes.all.current", 0)
        now = time.monotonic()
        # allocated too: once the cache holds a step's memory, reserved stays flat while the
        # tensors inside it (activations at the end of a forward) still reach new highs
        if (why == _PERIODIC and (reserved > s.peak_snap_reserved * PEAK_GROWTH or
                                  allocated > s.peak_snap_allocated * PEAK_GROWTH) and
                now - s.peak_snap_time >= PEAK_MIN_S):
            s.peak_snap_reserved = max(reserved, s.peak_snap_reserved)
            s.peak_snap_allocated = max(allocated, s.peak_snap_allocated)
            s.peak_snap_time = now
            _write_snapshot(s, _PEAK)  # updates snap_allocated: the rule below stays quiet
        if (why == _PERIODIC and allocated == st.get("allocated_bytes.all.peak", 0) and
                allocated > s.snap_allocated.get(d, 0) and now >= s.alloc_snap_next):
            _write_snapshot(s, _PEAK)
            s.alloc_snap_next = now + ALLOC_SNAP_COST_RATIO * (time.monotonic() - now)


# ---- what optimizers hold -------------------------------------------------------------------

def _roles(s, opt):
    """{storage address: (bytes, device, element size, role)} of what opt holds on CUDA devices.
    A storage seen under two roles keeps the first: weight, then gradient, then state."""
    out = {}

    def add(t, role):
        if t is None or not t.is_cuda:
            return
        st = t.untyped_storage()
        ptr = st.data_ptr()
        if ptr and ptr not in out:
            out[ptr] = (st.nbytes(), t.device.index or 0, t.element_size(), role)

    Tensor = s.torch.Tensor
    params = [p for g in opt.param_groups for p in g["params"]]
    for p in params:
        add(p, _WEIGHT)
    for p in params:
        add(p.grad, _GRADIENT)
    for p in params:
        st = opt.state.get(p)
        if st:
            for v in st.values():
                if isinstance(v, Tensor):
                    add(v, _OPT_STATE)
    return out


def _roles_recs(s, entry, roles, out):
    """The optimizer's set as TORCH_ROLES records into out when it changed; its hash."""
    h = hash(frozenset(roles.items())) & _MASK64
    if h != entry[2]:
        entry[2] = h
        items = sorted(roles.items())
        for i in range(0, max(len(items), 1), _ROLES_PER_REC):
            body = b"".join(struct.pack("<QQiHBx", a, n, d, e, r)
                            for a, (n, d, e, r) in items[i:i + _ROLES_PER_REC])
            out += _rec_tail("QIIII", _ROLES, 0 if i == 0 else 1, body, entry[1], entry[0],
                             len(body), len(items), 0)
    return h


_STEP_REC = struct.Struct("<HHIQQQQQQQQIiIIII")  # a TORCH_STEP record before its name
_STEPS = struct.Struct("<Q")  # its steps' count, at offset 16


def _optimizer_entry(s, opt):
    """[number, steps, hash of the last set written, weak reference, fingerprint at the last
    step, [(device, totals)] at the last step, monotonic ns before which its steps read no
    memory_stats, (name's length, name padded to 8, TORCH_STEP record size), whether its
    fingerprint takes the slow way, the TORCH_STEP records of a step that reads no
    memory_stats with the same set (steps' count written over)] of opt."""
    entry = s.optimizers.get(id(opt))
    if entry is None or entry[3]() is not opt:  # new, or an id reused after a collection
        s.opt_count += 1
        name = type(opt).__name__.encode("utf-8", "replace")[:200]
        tail = _pad(name)
        entry = s.optimizers[id(opt)] = [s.opt_count, 0, None, weakref.ref(opt), None, [], 0,
                                         (len(name), tail, _STEP_REC.size + len(tail)),
                                         False, bytearray()]
    return entry


def _fingerprint_slow(s, opt):
    """_fingerprint without its shortcuts: a gradient that is None reads 0, a state value that
    is not a tensor is skipped."""
    params = [p for g in opt.param_groups for p in g["params"]]
    key = [p.data_ptr() for p in params]
    key += [0 if (g := p.grad) is None else g.data_ptr() for p in params]
    Tensor = s.torch.Tensor
    for st in opt.state.values():
        key += [v.data_ptr() for v in st.values() if isinstance(v, Tensor)]
    return key


def _fingerprint(s, opt, entry):
    """The data pointers of everything opt holds, in a fixed order (parameters, their
    gradients, the state's tensors in the state's own order): equal to the last step's when
    nothing was replaced. One C call per tensor, made by map() without a Python frame between
    them; where a gradient is None or a state value is not a tensor (Tensor.data_ptr raises
    TypeError), _fingerprint_slow gives the same key, and entry[8] keeps to it afterwards."""
    if entry[8]:
        return _fingerprint_slow(s, opt)
    dp = s.data_ptr
    params = [p for g in opt.param_groups for p in g["params"]]
    try:
        key = list(map(dp, params))
        key += map(dp, map(_GRAD, params))
        key += map(dp, _chain(map(dict.values, opt.state.values())))
        return key
    except TypeError:
        entry[8] = True
        return _fingerprint_slow(s, opt)


def _on_step(opt, args, kwargs):
    """The global optimizer step post-hook: after every optimizer's step()."""
    s = _S
    if s is None or s.closed:
        return
    try:
        entry = s.optimizers.get(id(opt))
        if entry is None or entry[3]() is not opt:
            entry = _optimizer_entry(s, opt)
        entry[1] += 1
        key = _fingerprint(s, opt, entry)
        if key == entry[4] and time.monotonic_ns() < entry[6]:
            # the common step: the same set, memory_stats not read. The records of the last
            # step with the steps' count written over (their time is the shim's)
            tmpl = entry[9]
            if tmpl:  # (empty where it holds nothing on a CUDA device: b"" closes the bridge)
                for off in range(16, len(tmpl), entry[7][2]):
                    _STEPS.pack_into(tmpl, off, entry[1])
                s.emit(bytes(tmpl))
            return
        out = bytearray()
        if key != entry[4]:  # something was replaced: read the set again
            roles = _roles(s, opt)
            _roles_recs(s, entry, roles, out)
            totals = {}
            for n, d, e, r in roles.values():
                t = totals.setdefault(d, [0, 0, 0, 0, 0, 0])
                t[r] += n
                t[3 + r] += 1
            entry[4], entry[5] = key, sorted(totals.items())
        nlen, tail, size = entry[7]  # (packed by a compiled Struct, the name encoded once)
        pack = _STEP_REC.pack
        tmpl = bytearray()
        t0 = time.monotonic_ns()
        for d, t in entry[5]:
            # the nested dict: memory_stats() flattens it in Python, 6x the time (7.5
            # against 47 us a call on the simulated stack)
            st = s.torch.cuda.memory_stats_as_nested_dict(d)
            out += pack(_STEP, 0, size, 0, entry[1], t[0], t[1], t[2], entry[2],
                        _current(st, "allocated_bytes"), _current(st, "reserved_bytes"),
                        entry[0], d, t[3], t[4], t[5], nlen)
            out += tail
            tmpl += pack(_STEP, 0, size, 0, entry[1], t[0], t[1], t[2], entry[2], _UNREAD,
                         _UNREAD, entry[0], d, t[3], t[4], t[5], nlen)
            tmpl += tail
        entry[6] = t0 + STEP_STATS_COST_RATIO * (time.monotonic_ns() - t0)
        entry[9] = tmpl
        if out:
            s.emit(bytes(out))
    except Exception as e:  # never into the program's step
        _failed("the optimizer step hook", e)


def _refresh_roles(s):
    """Before a snapshot: every live optimizer's set as it is now (written when changed), so
    that the snapshot's blocks are matched against what the optimizers hold at that moment
    (zero_grad(set_to_none=True) frees the gradients between steps). Where the set written
    changed, the next step reads and writes its own again, even if its fingerprint is the last
    step's (its gradients back at their addresses)."""
    out = bytearray()
    for key, entry in list(s.optimizers.items()):
        opt = entry[3]()
        if opt is None:  # collected: it holds nothing any more
            del s.optimizers[key]
            out += _rec_tail("QIIII", _ROLES, 0, b"", entry[1], entry[0], 0, 0, 0)
            continue
        h = entry[2]
        if _roles_recs(s, entry, _roles(s, opt), out) != h:
            entry[4] = None
    if out:
        s.emit(bytes(out))


# ---- entry points ----------------------------------------------------------------------------

def _on_oom(device, requested, limit, device_free):
    """PyTorch's OOM observer: called before it raises, with the allocator's lock released."""
    s = _S
    if s is None or s.closed:
        return
    try:
        torch = s.torch
        s.devices.add(int(device))
        st = _memory_stats(s, device)
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


def _current(nested, stat):
    """The current value of one of memory_stats_as_nested_dict()'s byte counters (0 if absent)."""
    return nested.get(stat, {}).get("all", {}).get("current", 0)


def _reserved(s, device):
    """PyTorch's reserved bytes on device (host-side figures: no CUDA call, no context made; the
    nested dict costs 22 us where memory_stats() flattens it in 137, simulated stack)."""
    return _current(s.torch.cuda.memory_stats_as_nested_dict(device), "reserved_bytes")


def _add_used_devices(s):
    """Devices PyTorch holds memory on (the program may use several, on other threads or
    streams, or make blocks on one before the bridge installs) join the sampled ones."""
    for d in range(s.ndev):
        if d not in s.devices and _reserved(s, d) > 0:
            s.devices.add(d)


def tick():
    """A periodic sample (the shim's flusher asks for it as a pending call)."""
    s = _S
    if s is None or s.closed or s.busy:  # inside the bridge's own writing: the next tick samples
        return
    try:
        s.devices.add(s.torch.cuda.current_device())
        _add_used_devices(s)
        _sample(s, _PERIODIC)
    except Exception as e:
        _failed("a memory_stats sample", e)


def _at_exit():
    s = _S
    if s is None or s.closed:
        return
    s.busy += 1  # no tick from here on (closed at the end)
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


def exit_flush():
    """The shim calls this at os._exit (preload/torch.c, gt_torch_exit), which skips atexit: the
    exit sample and snapshot, with the block events since the last snapshot, are written now."""
    _at_exit()


def _install_step_hook(s):
    """Every optimizer's steps, whenever it was made (PyTorch's global hooks, since 2.0)."""
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except Exception:
        _note("PyTorch bridge: this torch has no global optimizer hooks: no weights, gradients "
              "or optimizer state by role", warning=False)
        return
    s.step_hook = register_optimizer_step_post_hook(_on_step)


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
            torch.cuda.memory._record_memory_history(enabled="all", context="alloc",
                                                     stacks="python", max_entries=TRACE_MAX)
            s.history |= _HISTORY_OURS
            s.ndev = torch.cuda.device_count()
            s.empty_at_start = {d for d in range(s.ndev) if _reserved(s, d) == 0}
        s.ndev = torch.cuda.device_count()
        try:
            torch._C._cuda_attach_out_of_memory_observer(_on_oom)
        except Exception as e:
            if s.async_backend:  # cudaMallocAsync takes no observers
                _note("PyTorch bridge: backend cudaMallocAsync takes no OOM observer: its OOMs "
                      "are seen at the driver (cuMemAllocAsync) only", warning=False)
            else:
                _failed("attaching the OOM observer", e)
        atexit.register(_at_exit)
        _install_step_hook(s)
        # a device's start sample is its replay's base: PyTorch's first CUDA call may have made
        # blocks on a device other than the current one before this pending call ran
        _add_used_devices(s)
        _sample(s, _START)
        _note("PyTorch bridge installed: level %s, backend %s, torch %s" %
              (level, torch.cuda.get_allocator_backend(), torch.__version__), warning=False)
    except Exception as e:
        _failed("install", e)
    return True
