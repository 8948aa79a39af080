"""--weights-file: the model's constant arrays in `<prefix>_weights.bin`, not in C arrays.

The blob is a 64-byte little-endian header, then each constant array at a 16-byte aligned
offset from the blob's start (zero padding between). The generated C reads the arrays in
place through pointers into the blob that `<prefix>_init_weights()` checked and bound.

Header (all fields little-endian uint32 but the hash):
    0  magic "MCWB"              4  format version (1)
    8  header bytes (64)        12  payload bytes (from offset 64 to the last array's end)
   16  CRC-32 of the payload    20  reserved (0), 8 bytes
   28  CRC-32 of bytes 0..27 and 32..63 (the header but this field)
   32  structure hash: SHA-256 of the generated C with its stamp blanked. The C embeds all the
       code depends on (op kinds, shapes, dtypes, requantization, the arrays' names, types,
       counts and offsets), and no weight value, so a retrained model of the same structure
       gets the same C and the same hash, and its blob fits the code built before.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..digest import sha256
from ..records import dataclass

MAGIC = b"MCWB"
FORMAT_VERSION = 1
HEADER_BYTES = 64
ALIGNMENT = 16
HASH_OFFSET = 32
HEADER_CRC_OFFSET = 28


@dataclass(frozen=True)
class BlobLayout:
    offsets: tuple[int, ...]  # each array's offset from the blob's start
    payload_bytes: int  # from HEADER_BYTES to the end of the last array


def _aligned(value: int) -> int:
    return (value + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def blob_layout(sizes: Sequence[int]) -> BlobLayout:
    offsets = []
    end = HEADER_BYTES
    for size in sizes:
        start = _aligned(end)
        offsets.append(start)
        end = start + size
    return BlobLayout(tuple(offsets), end - HEADER_BYTES)


def header_data(layout: BlobLayout) -> dict[str, Any]:
    """What weights_file.c.j2 checks the header against; "structure_bytes" is filled in once
    the structure hash is known (it is computed over C rendered with it blank)."""
    return {
        "magic": MAGIC.decode(), "version": FORMAT_VERSION, "header_bytes": HEADER_BYTES,
        "header_crc_offset": HEADER_CRC_OFFSET, "hash_offset": HASH_OFFSET, "alignment": ALIGNMENT,
        "payload_bytes": layout.payload_bytes, "file_bytes": HEADER_BYTES + layout.payload_bytes,
        "structure_bytes": "",
    }


def structure_hash(code_texts: Sequence[str]) -> bytes:
    digest = sha256()
    for text in code_texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.digest()


def pack_blob(arrays: Sequence[np.ndarray], layout: BlobLayout, structure: bytes) -> bytes:
    payload = bytearray(layout.payload_bytes)
    for values, offset in zip(arrays, layout.offsets):
        data = np.ascontiguousarray(values).astype(values.dtype.newbyteorder("<"), copy=False).tobytes()
        start = offset - HEADER_BYTES
        payload[start:start + len(data)] = data
    header = bytearray(struct.pack("<4sIIIIII", MAGIC, FORMAT_VERSION, HEADER_BYTES, layout.payload_bytes,
                                   zlib.crc32(payload), 0, 0))
    header += b"\0" * (HASH_OFFSET - len(header)) + structure
    assert len(header) == HEADER_BYTES
    header_crc = zlib.crc32(bytes(header[:HEADER_CRC_OFFSET]) + bytes(header[HEADER_CRC_OFFSET + 4:]))
    header[HEADER_CRC_OFFSET:HEADER_CRC_OFFSET + 4] = struct.pack("<I", header_crc)
    return bytes(header) + bytes(payload)


def unbind_static(code: str, names: Sequence[str]) -> str:
    """Each block-scope `static const` line of `code` whose initialiser names a weights array
    loses `static`: the array's address (a pointer into the blob) is known only at run time, and
    C99 allows that in an automatic object's initialiser."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b") if names else None
    lines = code.split("\n")
    for i, line in enumerate(lines):
        body = line.lstrip()
        if pattern is not None and body.startswith("static const ") and pattern.search(body):
            lines[i] = line[:len(line) - len(body)] + body[len("static "):]
    return "\n".join(lines)


def c_bytes(data: bytes) -> str:
    return ", ".join(f"0x{b:02X}u" for b in data)
