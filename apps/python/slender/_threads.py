"""One lock per simulator object (issue 49): every method and property of a ``Simulator`` or a
``BatchedSimulator`` takes its object's re-entrant lock, so that a second thread that calls into
the same object waits until the first has returned (two threads stepping one simulator used to
crash or lose steps). The lock is re-entrant: a force or actuation callback may call its own
simulator from inside ``step``. The native code releases the GIL while it steps, so threads with
a simulator each still run in parallel; a thread waiting for a lock releases the GIL too."""

import functools
import threading
import weakref

_locks = weakref.WeakKeyDictionary()  # the object's lock, gone with the object
_table = threading.Lock()  # guards the creation of a lock


def lock_of(obj):
    """The re-entrant lock of a simulator object (made on first use)."""
    lock = _locks.get(obj)
    if lock is None:
        with _table:
            lock = _locks.get(obj)
            if lock is None:
                lock = _locks[obj] = threading.RLock()
    return lock


def _locked(fn):
    @functools.wraps(fn)
    def call(self, *args, **kwargs):
        with lock_of(self):
            return fn(self, *args, **kwargs)

    return call


def guard(cls):
    """Wraps every method (but the constructor and Python's own slots) and every property of
    the native class `cls` to take the object's lock."""
    for name, attr in list(vars(cls).items()):
        if name.startswith("__") and name != "__repr__":
            continue
        if isinstance(attr, property):
            setattr(cls, name, property(attr.fget and _locked(attr.fget),
                                        attr.fset and _locked(attr.fset), None, attr.__doc__))
        elif type(attr).__name__ == "instancemethod":
            setattr(cls, name, _locked(getattr(cls, name)))
    return cls
