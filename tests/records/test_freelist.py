"""keep_freed (kafkacodec/records/_native_record.c): the freelists of Record and the batch classes.

A class whose freed objects are kept must behave exactly as without: what an object held is
released when it goes, reference cycles through it are collected, its class is held once
per live object, and subclasses (with a __dict__, weak references or __del__ of their own)
are made and freed as CPython makes and frees them."""

import gc
import sys
import weakref

import pytest

from kafkacodec.records import _native
from kafkacodec.records import batches as B


class Held:
    """Something an object holds, whose freeing can be seen."""


class Kept:
    __slots__ = ("a", "b", "c")

    def __init__(self, a=None, b=None, c=None):
        self.a, self.b, self.c = a, b, c


class Extended(Kept):
    __slots__ = ("d", "__dict__", "__weakref__")


_native.keep_freed(Kept)
_native.keep_freed(Kept)  # twice is once


@pytest.mark.parametrize("cls", [Kept, Extended, B.Record])
def test_what_an_object_held_is_released_with_it(cls):
    held = [Held() for _ in range(3)]
    refs = [weakref.ref(h) for h in held]
    obj = cls(*held[:3])
    if cls is Extended:
        obj.d, obj.anything = Held(), held
        refs.append(weakref.ref(obj.d))
    del held
    assert all(r() is not None for r in refs)
    del obj
    assert all(r() is None for r in refs)


@pytest.mark.parametrize("cls", [Kept, Extended, B.Record, B.RecordBatch, B.LegacyBatch])
def test_a_class_is_held_once_per_live_object(cls):
    gc.collect()
    before = sys.getrefcount(cls)
    objs = [cls.__new__(cls) for _ in range(200)]
    assert sys.getrefcount(cls) == before + 200
    del objs
    assert sys.getrefcount(cls) == before


def test_cycles_through_kept_objects_are_collected():
    sentinel = Held()
    ref = weakref.ref(sentinel)
    a, b = Kept(), Extended()
    a.a, b.a, a.b = b, a, sentinel
    b.anything = b
    del a, b, sentinel
    gc.collect()
    assert ref() is None


def test_a_freed_object_comes_back_empty():
    for _ in range(3):
        objs = [Kept(Held(), Held(), Held()) for _ in range(100)]
        del objs
        fresh = [Kept.__new__(Kept) for _ in range(100)]
        for obj in fresh:
            with pytest.raises(AttributeError):
                obj.a  # noqa: B018
        assert all(gc.is_tracked(obj) for obj in fresh)


def test_a_subclass_del_and_one_given_later_are_called():
    calls = []

    class WithDel(Kept):
        __slots__ = ()

        def __del__(self):
            calls.append(self.a)

    WithDel(1)
    assert calls == [1]
    try:
        Kept.__del__ = lambda self: calls.append(("kept", self.a))
        Kept(2)
        WithDel(3)
    finally:
        del Kept.__del__
    assert calls == [1, ("kept", 2), 3]
    Kept(4)
    assert calls == [1, ("kept", 2), 3]


def test_resurrection_in_del_keeps_the_object():
    saved = []

    class Phoenix(Kept):
        __slots__ = ()

        def __del__(self):
            saved.append(self)

    Phoenix(Held())
    assert isinstance(saved[0].a, Held)


def test_only_classes_of_slots_alone_keep_freed_objects():
    class WithDict:
        pass

    class WithWeakref:
        __slots__ = ("a", "__weakref__")

    class WithDel:
        __slots__ = ("a",)

        def __del__(self):
            pass

    class OnList(list):
        __slots__ = ("a",)

    for cls in (WithDict, WithWeakref, WithDel, OnList, int):
        with pytest.raises(TypeError, match="__slots__ alone"):
            _native.keep_freed(cls)
    with pytest.raises(TypeError, match="a class is needed"):
        _native.keep_freed(1)


def _allocations(cls, n=50):
    """How many objects the collector saw made while n objects of cls were made again
    after n were freed (CPython counts each allocation of a tracked object, not a reuse)."""
    objs = [cls.__new__(cls) for _ in range(n)]
    del objs
    gc.disable()
    try:
        before = gc.get_count()[0]
        made = [cls.__new__(cls) for _ in range(n)]
        counted = gc.get_count()[0] - before
        del made  # only now: a freed object uncounts itself
        return counted
    finally:
        gc.enable()


class NotKept:
    __slots__ = ("a",)


@pytest.mark.parametrize("cls", [Kept, B.Record, B.RecordBatch, B.LegacyBatch])
def test_freed_objects_are_reused(cls):
    assert _allocations(NotKept) >= 50
    assert _allocations(cls) <= 2  # the list


def test_a_subclass_is_its_own():
    for cls in (B.Record, B.RecordBatch, B.LegacyBatch):
        sub = type("Sub", (cls,), {})  # a __dict__: CPython's allocation and subtype_dealloc
        with pytest.raises(TypeError, match="__slots__ alone"):
            _native.keep_freed(sub)
        assert _allocations(sub) >= 50
