"""A pickle reader that runs only data opcodes and asks an allowlist about everything else.

``pickle.load`` executes a file: its GLOBAL opcode imports whatever module the file names and
REDUCE calls it, so a file can run ``os.system``.  This reader is its own small interpreter (the
opcodes of protocol 2 that PyTorch's ``weights_only`` reader accepts, and nothing else).  Data
opcodes (numbers, strings, lists, dicts, tuples, the memo) it runs itself; the four that could
reach code it hands to a ``policy`` (``allowlist.Allowlist``):

- GLOBAL ``module name``: ``policy.find(module, name)`` returns what minitensor means by that
  name (its own function or class), or raises: nothing is ever imported;
- REDUCE, NEWOBJ, BUILD: ``policy.call``, ``policy.new``, ``policy.build``, on those values only;
- BINPERSID: ``policy.persistent_load(pid)`` (a tensor's storage, read from the archive).

Each malformed program (truncated, stack underflow, a missing memo slot, an unknown opcode)
raises ``CheckpointError``; no opcode allocates more than the bytes the program holds.
"""

from __future__ import annotations

import pickle
import struct
from collections import Counter, OrderedDict


class CheckpointError(ValueError, pickle.UnpicklingError):
    """A checkpoint that cannot be read safely: a ValueError, and the ``pickle.UnpicklingError``
    PyTorch's ``weights_only`` reader raises (so code catching either keeps working)."""


# PyTorch writes protocol 2 with Python 2's module names (``__builtin__ set``); read them as Python 3's.
_MODULE_RENAMES = {"__builtin__": "builtins", "copy_reg": "copyreg"}
_MAX_NAME = 1000  # bytes in a GLOBAL's module or name line


class AllowlistUnpickler:
    """Run the pickle program ``data`` (bytes); ``load()`` returns the value it builds.

    >>> AllowlistUnpickler(b"\\x80\\x02]q\\x00(K\\x01K\\x02e.", policy=None).load()
    [1, 2]
    """

    def __init__(self, data: bytes, policy, encoding: str = "utf-8") -> None:
        self.data, self.pos = data, 0
        self.policy, self.encoding = policy, encoding
        self.stack: list = []
        self.marks: list = []  # the stacks saved by MARK
        self.memo: dict = {}

    # ------------------------------------------------------------ bytes
    def read(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise CheckpointError(
                f"data.pkl ends inside an opcode (byte {self.pos}: {n} bytes wanted, {len(self.data) - self.pos} left)"
            )
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def readline(self) -> str:
        end = self.data.find(b"\n", self.pos, self.pos + _MAX_NAME)
        if end < 0:
            raise CheckpointError(f"data.pkl: a GLOBAL name at byte {self.pos} has no end within {_MAX_NAME} bytes")
        line = self.data[self.pos : end]
        self.pos = end + 1
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise CheckpointError(f"data.pkl: a GLOBAL name at byte {self.pos} is not UTF-8") from None

    # ------------------------------------------------------------ stack
    def pop(self):
        if not self.stack:
            raise CheckpointError(f"data.pkl: the opcode at byte {self.pos - 1} needs a value and the stack is empty")
        return self.stack.pop()

    def top(self):
        if not self.stack:
            raise CheckpointError(f"data.pkl: the opcode at byte {self.pos - 1} needs a value and the stack is empty")
        return self.stack[-1]

    def pop_mark(self) -> list:
        """The items pushed since the last MARK (and the stack as it was before it)."""
        if not self.marks:
            raise CheckpointError(f"data.pkl: the opcode at byte {self.pos - 1} needs a MARK and there is none")
        items, self.stack = self.stack, self.marks.pop()
        return items

    # ------------------------------------------------------------ the loop
    def load(self):
        """Run the program to its STOP; the value on top of the stack is the result."""
        while True:
            code = self.read(1)
            if code == b".":  # STOP
                return self.pop()
            step = _OPCODES.get(code)
            if step is None:
                raise CheckpointError(
                    f"data.pkl: opcode {code!r} at byte {self.pos - 1} is not one a PyTorch checkpoint uses"
                )
            step(self)


# One function per opcode: what it reads after the opcode byte, and what it does to the stack.
def _proto(r: AllowlistUnpickler) -> None:
    version = r.read(1)[0]
    if version > 5:
        raise CheckpointError(f"data.pkl: pickle protocol {version} is not a known protocol")


def _global(r: AllowlistUnpickler) -> None:
    module, name = r.readline(), r.readline()
    r.stack.append(r.policy.find(_MODULE_RENAMES.get(module, module), name))


def _reduce(r: AllowlistUnpickler) -> None:
    args = r.pop()
    func = r.pop()
    if type(args) is not tuple:
        raise CheckpointError(f"data.pkl: REDUCE at byte {r.pos - 1} has arguments of type {type(args).__name__}")
    r.stack.append(r.policy.call(func, args))


def _newobj(r: AllowlistUnpickler) -> None:
    args = r.pop()
    cls = r.pop()
    if type(args) is not tuple:
        raise CheckpointError(f"data.pkl: NEWOBJ at byte {r.pos - 1} has arguments of type {type(args).__name__}")
    r.stack.append(r.policy.new(cls, args))


def _build(r: AllowlistUnpickler) -> None:
    state = r.pop()
    r.policy.build(r.top(), state)


def _persistent_id(r: AllowlistUnpickler) -> None:
    r.stack.append(r.policy.persistent_load(r.pop()))


def _append(r: AllowlistUnpickler) -> None:
    item = r.pop()
    _list(r, "APPEND").append(item)


def _appends(r: AllowlistUnpickler) -> None:
    items = r.pop_mark()
    _list(r, "APPENDS").extend(items)


def _list(r: AllowlistUnpickler, opcode: str) -> list:
    target = r.top()
    if type(target) is not list:
        raise CheckpointError(f"data.pkl: {opcode} at byte {r.pos - 1} into a {type(target).__name__}, not a list")
    return target


def _setitem(r: AllowlistUnpickler) -> None:
    value = r.pop()
    key = r.pop()
    _store(r, "SETITEM", [key, value])


def _setitems(r: AllowlistUnpickler) -> None:
    items = r.pop_mark()
    if len(items) % 2:
        raise CheckpointError(f"data.pkl: SETITEMS at byte {r.pos - 1} has an odd number of items")
    _store(r, "SETITEMS", items)


def _store(r: AllowlistUnpickler, opcode: str, items: list) -> None:
    target = r.top()
    if type(target) not in (dict, OrderedDict, Counter):
        raise CheckpointError(f"data.pkl: {opcode} at byte {r.pos - 1} into a {type(target).__name__}, not a dict")
    try:
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
    except TypeError:  # an unhashable key (a list, a dict)
        raise CheckpointError(
            f"data.pkl: {opcode} at byte {r.pos - 1} has a key of type {type(items[i]).__name__}, not hashable"
        ) from None


def _mark(r: AllowlistUnpickler) -> None:
    r.marks.append(r.stack)
    r.stack = []


def _tuple(r: AllowlistUnpickler) -> None:
    items = tuple(r.pop_mark())  # first: pop_mark switches r.stack back to the stack under the MARK
    r.stack.append(items)


def _tuple_n(n: int):
    def step(r: AllowlistUnpickler) -> None:
        if len(r.stack) < n:
            raise CheckpointError(f"data.pkl: TUPLE{n} at byte {r.pos - 1} with {len(r.stack)} values on the stack")
        items = tuple(r.stack[len(r.stack) - n :])
        del r.stack[len(r.stack) - n :]
        r.stack.append(items)

    return step


def _short_string(r: AllowlistUnpickler) -> None:
    """SHORT_BINSTRING: a Python 2 ``str`` (bytes), decoded with ``encoding`` unless that is 'bytes'."""
    data = r.read(r.read(1)[0])
    if r.encoding == "bytes":
        r.stack.append(data)
        return
    try:
        r.stack.append(data.decode(r.encoding, "strict"))
    except (UnicodeDecodeError, LookupError) as e:
        raise CheckpointError(f"data.pkl: a Python 2 string at byte {r.pos} cannot be decoded: {e}") from None


def _unicode(r: AllowlistUnpickler) -> None:
    data = r.read(struct.unpack("<I", r.read(4))[0])  # read() refuses a length past the end
    try:
        r.stack.append(data.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        raise CheckpointError(f"data.pkl: the string ending at byte {r.pos} is not UTF-8") from None


def _put(size: int, fmt: str):
    def step(r: AllowlistUnpickler) -> None:
        r.memo[struct.unpack(fmt, r.read(size))[0]] = r.top()

    return step


def _get(size: int, fmt: str):
    def step(r: AllowlistUnpickler) -> None:
        slot = struct.unpack(fmt, r.read(size))[0]
        if slot not in r.memo:
            raise CheckpointError(f"data.pkl: memo slot {slot} is read at byte {r.pos} before it is written")
        r.stack.append(r.memo[slot])

    return step


def _push(value_of):
    def step(r: AllowlistUnpickler) -> None:
        r.stack.append(value_of(r))

    return step


_OPCODES = {
    b"\x80": _proto,
    b"c": _global,
    b"R": _reduce,
    b"\x81": _newobj,
    b"b": _build,
    b"Q": _persistent_id,
    b"a": _append,
    b"e": _appends,
    b"s": _setitem,
    b"u": _setitems,
    b"(": _mark,
    b"t": _tuple,
    b"\x85": _tuple_n(1),
    b"\x86": _tuple_n(2),
    b"\x87": _tuple_n(3),
    b"U": _short_string,
    b"X": _unicode,
    b"q": _put(1, "<B"),
    b"r": _put(4, "<I"),
    b"h": _get(1, "<B"),
    b"j": _get(4, "<I"),
    b"N": _push(lambda r: None),
    b"\x88": _push(lambda r: True),
    b"\x89": _push(lambda r: False),
    b")": _push(lambda r: ()),
    b"]": _push(lambda r: []),
    b"}": _push(lambda r: {}),
    b"\x8f": _push(lambda r: set()),  # EMPTY_SET (PyTorch's reader accepts it)
    b"J": _push(lambda r: struct.unpack("<i", r.read(4))[0]),  # BININT
    b"K": _push(lambda r: r.read(1)[0]),  # BININT1
    b"M": _push(lambda r: struct.unpack("<H", r.read(2))[0]),  # BININT2
    b"G": _push(lambda r: struct.unpack(">d", r.read(8))[0]),  # BINFLOAT
    b"\x8a": _push(lambda r: int.from_bytes(r.read(r.read(1)[0]), "little", signed=True)),  # LONG1
}
