"""Weights and bias/scale entries in the Ethos-U55's formats.

Weight order (U55, one core; templates/runtime/npu/README.md, "Weight order", is the rule the
device decodes by). The decoded weights of one stream come OFM depth block by block (B
channels), within it IFM block by IFM block (IB = 16 part-kernel-first or 16-bit, else 32;
DEPTHWISE one), then sub-kernels of at most 8x8 (4x4 etc. dilated), and within a sub-kernel
its positions rounded up to R (4 DEPTHWISE, 4 part-kernel 8-bit, 2 part-kernel 16-bit, 1
depth-first), interleaved in micro-blocks of OU OFM channels and IU IFM channels; missing
channels and positions are zeros. The reordered weights are compressed by `weight_codec.encode`
(our encoder; Vela's `ethosu.mlw_codec` stream where ours is no shorter).

Bias/scale: 10 bytes per OFM channel, little-endian: a 40-bit two's complement bias, the
32-bit scale, the 6-bit shift (TFLite's quantized multiplier m with exponent e is scale m,
shift 31 - e; the NPU's TFL rounding then matches TFLite's MultiplyByQuantizedMultiplier).
"""

from __future__ import annotations

import functools

import numpy as np

from ..records import dataclass
from . import weight_codec

SUB_KERNEL_MAX = 8
BIAS_SCALE_BYTES = 10
STREAM_ALIGN = 16


@dataclass(frozen=True)
class WeightOrder:
    """What decides the order of a stream: block depth, traversal, micro-blocks, bit width."""

    ofm_block_depth: int
    depthwise: bool
    part_kernel_first: bool
    ifm_bits: int  # 8 or 16
    ofm_ublock_depth: int  # 4 on U55-32, else 8
    ifm_ublock_depth: int = 8
    dilation: tuple[int, int] = (1, 1)  # (y, x)


def _positions_rounding(order: WeightOrder) -> int:
    if order.depthwise:
        return 4
    if order.part_kernel_first:
        return 4 if order.ifm_bits == 8 else 2
    return 1


def reorder(weights: np.ndarray, order: WeightOrder) -> np.ndarray:
    """OHWI int weights (DEPTHWISE: O = channels, I = 1) in the U55 stream order, as int16."""
    depth, kh, kw, ifm_depth = weights.shape
    ou, iu = order.ofm_ublock_depth, order.ifm_ublock_depth
    ifm_block = 16 if (order.part_kernel_first or order.ifm_bits == 16) else 32
    if order.depthwise:
        ifm_depth, ifm_block = 1, 1
    step_y, step_x = SUB_KERNEL_MAX // order.dilation[0], SUB_KERNEL_MAX // order.dilation[1]
    rounding = _positions_rounding(order)
    padded = np.zeros((depth + order.ofm_block_depth + ou, kh, kw, ifm_depth + ifm_block + iu), np.int16)
    padded[:depth, :, :, :ifm_depth] = weights
    out: list[np.ndarray] = []
    for ofm_block in range(0, depth, order.ofm_block_depth):
        block_depth = min(order.ofm_block_depth, depth - ofm_block)
        for ifm_start in range(0, ifm_depth, ifm_block):
            cib = iu if order.depthwise else (
                min(ifm_block, ifm_depth - ifm_start) if order.part_kernel_first else ifm_block)
            for sub_y in range(0, kh, step_y):
                for sub_x in range(0, kw, step_x):
                    sh, sw = min(step_y, kh - sub_y), min(step_x, kw - sub_x)
                    out.extend(_sub_kernel(padded, order, ofm_block, block_depth, ifm_start, cib,
                                           (sub_y, sub_x, sh, sw), rounding))
    return np.concatenate(out) if out else np.zeros(0, np.int16)


def _sub_kernel(padded: np.ndarray, order: WeightOrder, ofm_block: int, block_depth: int,
                ifm_start: int, cib: int, sub: tuple[int, int, int, int], rounding: int) -> list[np.ndarray]:
    """One sub-kernel's weights of one OFM block and IFM block, in stream order."""
    sub_y, sub_x, sh, sw = sub
    ou, iu = order.ofm_ublock_depth, order.ifm_ublock_depth
    elements = -(-sh * sw // rounding) * rounding
    kernel = np.zeros((padded.shape[0], elements, padded.shape[3]), np.int16)
    window = padded[:, sub_y:sub_y + sh, sub_x:sub_x + sw, :].reshape(padded.shape[0], sh * sw, -1)
    kernel[:, :sh * sw, :] = window
    ofm_limit = ofm_block + block_depth  # channels past the block (or the op) are zeros
    kernel[ofm_limit:] = 0
    last_ifm = ifm_start + cib
    out = []
    for ifm_outer in range(0, cib if order.part_kernel_first else 1, iu):
        for ofm_ublock in range(0, block_depth, ou):
            ofms = slice(ofm_block + ofm_ublock, ofm_block + ofm_ublock + ou)
            if order.depthwise:
                # e, then oz: one weight per (position, channel)
                out.append(kernel[ofms, :, 0].T.reshape(-1))
                continue
            inner = iu if order.part_kernel_first else cib
            for e in range(elements):
                base = ifm_start + ifm_outer
                cells = kernel[ofms, e, base:base + inner].copy()  # (ou, inner)
                cells[:, max(0, last_ifm - base):] = 0
                # for ifm_inner step IU: for oz: for iz
                out.append(cells.reshape(ou, inner // iu, iu).transpose(1, 0, 2).reshape(-1))
    return out


def encode_weights(weights: np.ndarray, order: WeightOrder) -> bytes:
    """The compressed weight stream of OHWI `weights` (zero point already subtracted), padded
    to 16 bytes. Cached: a build lowers and estimates each op several times."""
    values = np.ascontiguousarray(weights, np.int16)
    return _encoded(values.tobytes(), values.shape, order)


@functools.lru_cache(maxsize=512)
def _encoded(data: bytes, shape: tuple[int, ...], order: WeightOrder) -> bytes:
    flat = reorder(np.frombuffer(data, np.int16).reshape(shape), order)
    if flat.size and (flat.min() < -255 or flat.max() > 255):
        raise ValueError("weights outside the 9-bit range -255..255")
    return weight_codec.encode(flat)


def encode_bias_scale(bias: np.ndarray, scales: np.ndarray, shifts: np.ndarray) -> bytes:
    """The 10-byte entries for each channel, padded to 16 bytes; ValueError if a field does not
    fit (bias 40-bit signed, scale 32-bit unsigned, shift 0..63)."""
    out = bytearray()
    for b, s, sh in zip(bias.tolist(), scales.tolist(), shifts.tolist(), strict=True):
        if not (-(1 << 39) <= b < 1 << 39 and 0 <= s < 1 << 32 and 0 <= sh < 64):
            raise ValueError(f"bias {b}, scale {s}, shift {sh} do not fit a bias/scale entry")
        out += (b & ((1 << 40) - 1)).to_bytes(5, "little") + s.to_bytes(4, "little") + bytes([sh])
    out += bytes(-len(out) % STREAM_ALIGN)
    return bytes(out)
