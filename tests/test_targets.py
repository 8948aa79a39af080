"""Targets as values.

One Target per --target name carries what used to be read from the name in several places;
the lookup names the valid targets; BuildOptions keeps its cache key (the name).
"""

from __future__ import annotations

import pytest

from mcugen.driver import BuildOptions
from mcugen.errors import McugenError
from mcugen.quantization import Rounding
from mcugen.targets import TARGET_NAMES, TARGETS, target


def test_every_name_looks_up_its_target() -> None:
    assert TARGET_NAMES == ("host", "cortex-m4", "cortex-m7", "cortex-m55")
    for name in TARGET_NAMES:
        assert target(name).name == name and target(name) is TARGETS[name]


def test_an_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(McugenError, match="'cortex-m3' is not one of host, cortex-m4, cortex-m7, cortex-m55"):
        target("cortex-m3")
    with pytest.raises(McugenError, match="not one of"):
        BuildOptions(target="m4")  # type: ignore[arg-type]


def test_features_decide_fast_paths_flags_and_boards() -> None:
    host, m4, m7, m55 = (target(n) for n in TARGET_NAMES)
    assert [t.fast_path for t in (host, m4, m7, m55)] == [None, "dsp", "dsp", "mve"]
    assert [t.plans_fast_path_scratch for t in (host, m4, m7, m55)] == [False, True, True, True]
    assert not host.is_cross and host.core_flags == () and host.qemu is None and host.clock_mhz is None
    for core in (m4, m7, m55):
        assert core.is_cross and f"-mcpu={core.name}" in core.core_flags and core.clock_mhz == 100.0
    assert m4.qemu is not None and (m4.qemu.machine, m4.qemu.cpu) == ("mps2-an386", "cortex-m4")
    assert m55.qemu is not None and (m55.qemu.machine, m55.qemu.cpu) == ("mps3-an547", "cortex-m55")
    assert m7.qemu is None
    assert all(t.npu is None for t in TARGETS.values())  # the slot --npu will fill


def test_build_options_take_a_target_and_keep_their_cache_key() -> None:
    by_value = BuildOptions(rounding=Rounding.LITERT, prefix="p", target=target("cortex-m55"))
    by_name = BuildOptions(rounding=Rounding.LITERT, prefix="p", target="cortex-m55")  # type: ignore[arg-type]
    assert by_value == by_name and by_value.target is target("cortex-m55")
    assert by_value.key() == "litert-p-cortex-m55--0"
    assert BuildOptions().key() == "tflm--host--0"
