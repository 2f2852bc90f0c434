"""gputrace annotation API for Python: describe a memory pool your code manages itself.

The same calls as include/gputrace/annotate.h, through ctypes. They reach the entry points that
libgputrace.so exports when it is loaded (LD_PRELOAD or the gputrace launcher) and do nothing
otherwise, so code can call them unconditionally::

    import gputrace_annotate as gta
    gta.gputrace_pool_create(pool_id, 0, "my arena")
    gta.gputrace_pool_add_range(pool_id, base, nbytes)
    gta.gputrace_block_alloc(pool_id, addr, size)
    gta.gputrace_block_free(pool_id, addr, size)
    gta.gputrace_block_fail(pool_id, size)
    gta.gputrace_pool_remove_range(pool_id, base, nbytes)
    gta.gputrace_pool_destroy(pool_id)

or, with the helper class (a context manager that destroys the pool on exit)::

    with gta.Pool(device=0, name="my arena") as pool:   # id: the object's id() unless given
        pool.add_range(base, nbytes)
        pool.alloc(addr, size)
        pool.free(addr, size)

Ids, addresses and sizes are Python ints (unsigned 64-bit). Thread-safe; no state is kept here.
"""
import ctypes

__all__ = [
    "gputrace_active", "gputrace_pool_create", "gputrace_pool_add_range",
    "gputrace_pool_remove_range", "gputrace_pool_destroy", "gputrace_block_alloc",
    "gputrace_block_free", "gputrace_block_fail", "Pool", "active",
]

_u64 = ctypes.c_uint64
_SIGS = {
    "pool_create": (_u64, ctypes.c_int, ctypes.c_char_p),
    "pool_add_range": (_u64, _u64, _u64),
    "pool_remove_range": (_u64, _u64, _u64),
    "pool_destroy": (_u64,),
    "block_alloc": (_u64, _u64, _u64),
    "block_free": (_u64, _u64, _u64),
    "block_fail": (_u64, _u64),
}


def _lookup():
    try:
        proc = ctypes.CDLL(None)  # the process's global scope: the preloaded shim if any
    except OSError:
        return {}
    found = {}
    for short, argtypes in _SIGS.items():
        try:
            fn = getattr(proc, "gputrace_annotate_" + short)
        except AttributeError:
            return {}  # all or nothing: a partial set means something else exports the names
        fn.argtypes = argtypes
        fn.restype = None
        found[short] = fn
    return found


_fns = _lookup()


def gputrace_active():
    """True when the tracer is loaded and the calls are recorded."""
    return bool(_fns)


active = gputrace_active


def _u(v):
    return int(v) & 0xFFFFFFFFFFFFFFFF


if _fns:
    _pc, _par, _prr, _pd = (_fns["pool_create"], _fns["pool_add_range"],
                            _fns["pool_remove_range"], _fns["pool_destroy"])
    _ba, _bf, _bfail = _fns["block_alloc"], _fns["block_free"], _fns["block_fail"]

    def gputrace_pool_create(pool, device=-1, name=None):
        if isinstance(name, str):
            name = name.encode("utf-8", "replace")
        _pc(_u(pool), int(device), name)

    def gputrace_pool_add_range(pool, addr, size):
        _par(_u(pool), _u(addr), _u(size))

    def gputrace_pool_remove_range(pool, addr, size):
        _prr(_u(pool), _u(addr), _u(size))

    def gputrace_pool_destroy(pool):
        _pd(_u(pool))

    def gputrace_block_alloc(pool, addr, size):
        _ba(_u(pool), _u(addr), _u(size))

    def gputrace_block_free(pool, addr, size=0):
        _bf(_u(pool), _u(addr), _u(size))

    def gputrace_block_fail(pool, size):
        _bfail(_u(pool), _u(size))

else:

    def gputrace_pool_create(pool, device=-1, name=None):
        pass

    def gputrace_pool_add_range(pool, addr, size):
        pass

    def gputrace_pool_remove_range(pool, addr, size):
        pass

    def gputrace_pool_destroy(pool):
        pass

    def gputrace_block_alloc(pool, addr, size):
        pass

    def gputrace_block_free(pool, addr, size=0):
        pass

    def gputrace_block_fail(pool, size):
        pass


class Pool:
    """One annotated pool. `pool_id` defaults to id(self) (unique while the object lives).
    Usable as a context manager: the pool is destroyed when the block ends."""

    def __init__(self, device=-1, name=None, pool_id=None):
        self.id = _u(pool_id if pool_id is not None else id(self))
        self._alive = True
        gputrace_pool_create(self.id, device, name)

    def add_range(self, addr, size):
        gputrace_pool_add_range(self.id, addr, size)

    def remove_range(self, addr, size):
        gputrace_pool_remove_range(self.id, addr, size)

    def alloc(self, addr, size):
        gputrace_block_alloc(self.id, addr, size)

    def free(self, addr, size=0):
        gputrace_block_free(self.id, addr, size)

    def fail(self, size):
        gputrace_block_fail(self.id, size)

    def destroy(self):
        if self._alive:
            self._alive = False
            gputrace_pool_destroy(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False
