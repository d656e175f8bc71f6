"""A pickle protocol-2 writer: the handful of opcodes a PyTorch checkpoint's ``data.pkl`` uses.

A pickle is a small stack-machine program.  Reading it runs the opcodes in order: most push a
value (``K 3`` pushes the int 3, ``X`` a string), some build containers from what was pushed
(``}`` pushes an empty dict, ``(`` marks the stack, ``u`` pops everything down to the mark into
the dict as key/value pairs), ``c module name`` pushes a named function or class and ``R``
calls it with the tuple on top.  ``q i`` remembers the top in slot i, ``h i`` pushes it again:
that is how one object shared by two places (a tensor, a storage) stays one object.

This writer only emits opcodes; ``saving.py`` decides what to write for each value.  The
program for ``{"w": 1.5}``::

    >>> w = PickleWriter()
    >>> w.proto(); w.empty_dict(); w.mark(); w.string("w"); w.float(1.5); w.setitems(); w.stop()
    >>> bytes(w.out)
    b'\\x80\\x02}(X\\x01\\x00\\x00\\x00wG?\\xf8\\x00\\x00\\x00\\x00\\x00\\x00u.'
"""

from __future__ import annotations

import struct


class PickleWriter:
    """Append opcodes to ``self.out`` (a bytearray).  ``memo`` maps a key to its memo slot."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.memo: dict = {}

    # ------------------------------------------------------------ frame
    def proto(self) -> None:
        """PROTO 2: the first opcode (torch.save's protocol)."""
        self.out += b"\x80\x02"

    def stop(self) -> None:
        """STOP: the value on top of the stack is the result."""
        self.out += b"."

    # ------------------------------------------------------------ values
    def none(self) -> None:
        self.out += b"N"

    def bool(self, value: bool) -> None:
        self.out += b"\x88" if value else b"\x89"  # NEWTRUE / NEWFALSE

    def int(self, value: int) -> None:
        """BININT1 (0..255), BININT2 (..65535), BININT (signed 32 bits) or LONG1 (up to 255 bytes)."""
        if 0 <= value < 256:
            self.out += b"K" + bytes([value])
        elif 0 <= value < 65536:
            self.out += b"M" + struct.pack("<H", value)
        elif -(2**31) <= value < 2**31:
            self.out += b"J" + struct.pack("<i", value)
        else:
            size = value.bit_length() // 8 + 1  # two's complement, little-endian, sign bit included
            if size > 255:
                raise ValueError(f"save: the integer {value} has more than 255 bytes (PyTorch's reader stops there)")
            self.out += b"\x8a" + bytes([size]) + value.to_bytes(size, "little", signed=True)

    def float(self, value: float) -> None:
        self.out += b"G" + struct.pack(">d", value)  # BINFLOAT: big-endian double

    def string(self, value: str) -> None:
        data = value.encode("utf-8", "surrogatepass")
        self.out += b"X" + struct.pack("<I", len(data)) + data  # BINUNICODE

    # ------------------------------------------------------------ containers
    def mark(self) -> None:
        """MARK: the items pushed from here on are gathered by the next TUPLE/APPENDS/SETITEMS."""
        self.out += b"("

    def empty_dict(self) -> None:
        self.out += b"}"

    def empty_list(self) -> None:
        self.out += b"]"

    def empty_tuple(self) -> None:
        self.out += b")"

    def tuple(self, length: int) -> None:
        """Pack the top ``length`` items (1, 2, 3) or everything since the MARK (other lengths)."""
        self.out += {1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(length, b"t")

    def appends(self) -> None:
        """APPENDS: extend the list under the MARK with the items above it."""
        self.out += b"e"

    def setitems(self) -> None:
        """SETITEMS: put the key/value pairs above the MARK into the dict under it."""
        self.out += b"u"

    # ------------------------------------------------------------ objects
    def global_(self, module: str, name: str) -> None:
        """GLOBAL: push the object called ``module.name`` (written once, then from the memo)."""
        if not self.get(("global", module, name)):
            self.out += b"c" + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n"
            self.put(("global", module, name))

    def reduce(self) -> None:
        """REDUCE: call the object under the top with the tuple on top as arguments."""
        self.out += b"R"

    def newobj(self) -> None:
        """NEWOBJ: ``cls.__new__(cls, *args)``, the class under the argument tuple."""
        self.out += b"\x81"

    def build(self) -> None:
        """BUILD: set the state on top into the object under it (its ``__dict__``)."""
        self.out += b"b"

    def persistent_id(self) -> None:
        """BINPERSID: the tuple on top names data kept outside the pickle (a storage record)."""
        self.out += b"Q"

    # ------------------------------------------------------------ memo
    def put(self, key) -> None:
        """Remember the top of the stack under ``key`` (BINPUT / LONG_BINPUT)."""
        slot = len(self.memo)
        self.memo[key] = slot
        self.out += b"q" + bytes([slot]) if slot < 256 else b"r" + struct.pack("<I", slot)

    def get(self, key) -> bool:
        """Push the object remembered under ``key`` (BINGET / LONG_BINGET); False if there is none."""
        slot = self.memo.get(key)
        if slot is None:
            return False
        self.out += b"h" + bytes([slot]) if slot < 256 else b"j" + struct.pack("<I", slot)
        return True
