"""rego-cpp's C API for the per-call steps: write an input, query the decision, read it.

regopy builds an input with one ctypes call per key, value and object item (about a hundred for a
call's document), each through Python-side type tests against the `collections.abc` classes, a
fresh string buffer, and a release and retake of the GIL (`ctypes.CDLL`). Bound here with
`ctypes.PyDLL` (the GIL stays held: each call lasts a microsecond) and fed prepared bytes, the
same decision costs about 40% less CPU (`bench/policy_eval.py`). Compiling stays with regopy.

A value is written as a list of `Op`s (a C function and its arguments), so that the part of a
document that does not change from call to call can be recorded once and replayed.
"""

from __future__ import annotations

import ctypes
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from regopy import rego_shared

__all__ = ["INT_RANGE", "MEMBER_END", "NativeError", "Op", "object_end", "ops_of", "query_with_input"]

INT_RANGE = range(-(2**63), 2**63)
"""The integers rego-cpp's C API takes; a bigger one cannot be given to a policy."""

_LIBRARY = ctypes.PyDLL(rego_shared.path)
_VOID, _SIZE, _TEXT = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p


def _bind(name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
    function = getattr(_LIBRARY, name)
    function.restype = restype
    function.argtypes = list(argtypes)
    return function  # type: ignore[no-any-return]


_new_input = _bind("regoNewInput", _VOID)
_free_input = _bind("regoFreeInput", None, _VOID)
_string = _bind("regoInputString", _SIZE, _VOID, _TEXT)
_int = _bind("regoInputInt", _SIZE, _VOID, ctypes.c_int64)
_float = _bind("regoInputFloat", _SIZE, _VOID, ctypes.c_double)
_boolean = _bind("regoInputBoolean", _SIZE, _VOID, ctypes.c_bool)
_null = _bind("regoInputNull", _SIZE, _VOID)
_item = _bind("regoInputObjectItem", _SIZE, _VOID)
_object = _bind("regoInputObject", _SIZE, _VOID, _SIZE)
_array = _bind("regoInputArray", _SIZE, _VOID, _SIZE)
_set = _bind("regoInputSet", _SIZE, _VOID, _SIZE)
_set_input = _bind("regoSetInput", _SIZE, _VOID, _VOID)
_query_entrypoint = _bind("regoBundleQueryEntrypoint", _VOID, _VOID, _VOID, _TEXT)
_output_ok = _bind("regoOutputOk", ctypes.c_bool, _VOID)
_output_size = _bind("regoOutputJSONSize", _SIZE, _VOID)
_output_json = _bind("regoOutputJSON", _SIZE, _VOID, _TEXT, _SIZE)
_free_output = _bind("regoFreeOutput", None, _VOID)

Op = tuple[Callable[..., int], tuple[Any, ...]]
"""One C call that pushes onto an input under construction: the function and its other arguments."""

_ITEM: Op = (_item, ())
MEMBER_END = _ITEM
"""Ends one key-value member of the object under construction (after its key and its value)."""
_NULL: Op = (_null, ())
_TRUE: Op = (_boolean, (True,))
_FALSE: Op = (_boolean, (False,))


class NativeError(Exception):
    """rego-cpp refused an input or a query; the message says which step."""


def ops_of(value: Any, into: list[Op] | None = None) -> list[Op]:
    """The calls that push `value` (JSON-like: mappings, sequences, sets, scalars) onto an input.

    Raises ValueError for what rego-cpp cannot take: another type, or an integer outside 64 bits.
    Strings are escaped (see `_text`): unescaped, a policy would read another value than the tool
    receives (`"x"` as `x`, `a\\b` as `a` and a backspace) and a NUL would cut the string.
    """
    ops = [] if into is None else into
    _push(value, ops)
    return ops


def object_end(count: int) -> Op:
    """Ends an object of `count` members: what `ops_of` appends after a mapping's members."""
    return (_object, (count,))


def _push(value: Any, ops: list[Op]) -> None:
    # The exact built-in types first, told by the type's identity: a call's arguments and time are
    # made of them, and the chain of `isinstance` tests below (`Mapping` is an ABC) costs several
    # times as much when a decision starts with cold caches, as it does inside a gateway
    # (docs/benchmarks.md, "Why a decision costs more inside a gateway").
    kind = type(value)
    if kind is str:
        ops.append((_string, (_text(value),)))
    elif kind is dict:
        _push_members(value, ops)
    elif kind is int:
        _push_int(value, ops)
    elif value is True:
        ops.append(_TRUE)
    elif value is False:
        ops.append(_FALSE)
    elif isinstance(value, str):
        ops.append((_string, (_text(value),)))
    elif isinstance(value, int):
        _push_int(value, ops)
    elif isinstance(value, float):
        ops.append((_float, (value,)))
    elif value is None:
        ops.append(_NULL)
    elif isinstance(value, Mapping):
        _push_members(value, ops)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _push(item, ops)
        ops.append((_set if isinstance(value, (set, frozenset)) else _array, (len(value),)))
    else:
        raise ValueError(f"a {type(value).__name__} cannot be given to a policy")


def _push_int(value: int, ops: list[Op]) -> None:
    # Compared, not `in INT_RANGE`: a range tests an int subclass (an IntEnum) by walking it.
    if not INT_RANGE.start <= value < INT_RANGE.stop:
        raise ValueError(f"the integer {value} does not fit in 64 bits")
    ops.append((_int, (value,)))


def _push_members(value: Mapping[Any, Any], ops: list[Op]) -> None:
    for key, item in value.items():
        _push(key, ops)
        _push(item, ops)
        ops.append(_ITEM)
    ops.append((_object, (len(value),)))


def _text(value: str) -> bytes:
    """rego-cpp reads the text as the inside of a JSON string literal (as a policy's own literals
    are kept), so quotes, backslashes and control characters are escaped the JSON way."""
    if _NEEDS_ESCAPE.search(value) is None:
        return value.encode()
    return json.dumps(value, ensure_ascii=False)[1:-1].encode()


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def query_with_input(interpreter: int, bundle: int, entrypoint: bytes, ops: Iterable[Op]) -> str | None:
    """Set the input the ops build and query one entrypoint of a compiled bundle.

    `interpreter` and `bundle` are the native handles regopy holds. Returns the output's JSON
    text, or None when the query failed (an error output: only `ok` may be asked of it then).
    """
    handle = _new_input()
    try:
        for function, arguments in ops:
            if function(handle, *arguments):
                raise NativeError("rego-cpp refused a value of the input")
        if _set_input(interpreter, handle):
            raise NativeError("rego-cpp refused the input")
    finally:
        _free_input(handle)
    output = _query_entrypoint(interpreter, bundle, entrypoint)
    if not output:
        raise NativeError("rego-cpp could not run the query")
    try:
        if not _output_ok(output):
            return None
        size = _output_size(output)
        buffer = ctypes.create_string_buffer(size)
        if _output_json(output, buffer, size):
            raise NativeError("rego-cpp could not write the output")
        return buffer.value.decode()
    finally:
        _free_output(output)
