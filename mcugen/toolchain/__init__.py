"""Compilers and emulators around the generated C: the layer above the pipeline.

    host.py     the host C compiler and the test harness: compile, cache, run (mcugen run,
                verify, profile on the host)
    cross.py    arm-none-eabi builds: code size of the generated C, the firmware application
                of firmware/common (shipped as mcugen/firmware) for a Cortex-M target
    qemu.py     run a firmware ELF on the target's QEMU board
    process.py  running a tool with a time limit

Dependencies point down: cli -> analysis -> toolchain -> driver -> pipeline stages. The
toolchain reads Target fields (targets.py) and never imports analysis.
"""
