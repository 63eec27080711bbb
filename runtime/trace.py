"""A trace of VM calls for Perfetto or chrome://tracing (Chrome's trace event format).

While a `Tracer` is set on a VM (`VirtualMachine.start_trace`), every instruction is one
event with its start and duration, named by what it does: a kernel launch by its kernel
(`kernel @main_conv2d_0`), a host function by its function, an allocation, a device copy,
or the instruction's mnemonic (`alloc_storage + alloc_tensor` where one step runs both);
each call of a VM function is an event around its instructions. Events carry the function and the instruction's position in it, and the
thread that ran them (the calling thread: a launch split between threads runs its other
chunks on native worker threads, inside the launch's event). Tracing runs every call on
the VM (no replays), like profiling, and costs a clock read per instruction.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from nimble.dialects import vm as vm_dialect

CATEGORIES = {"invoke_kernel": "kernel", "invoke_host": "host", "device_copy": "copy", "alloc_storage": "alloc",
              "alloc_tensor": "alloc", "alloc_tensor_reg": "alloc", "alloc_adt": "alloc", "alloc_tuple": "alloc",
              "alloc_closure": "alloc", "invoke": "call", "invoke_closure": "call", "ret": "call"}
"""Event categories by mnemonic (the rest are `vm`)."""


class Tracer:
    """The events of the calls run while it is set; `write(path)` saves them."""

    def __init__(self, machine: Any):
        self.machine = machine
        self.origin = time.perf_counter_ns()
        self.events: list[dict[str, Any]] = []
        self.threads: dict[int, str] = {}
        self.open: list[tuple[int, int]] = []  # (function index, start) of the calls under way
        self.labels: dict[int, list[tuple[str, str, dict[str, Any]]]] = {}

    def _labels(self, index: int) -> list[tuple[str, str, dict[str, Any]]]:
        """(name, category, args) of each step of function `index`."""
        made = self.labels.get(index)
        if made is None:
            program = self.machine.program
            f = program.functions[index]
            made = []
            for origin in self.machine.origins[index]:
                opcode, values = f.code[origin]
                mnemonic = vm_dialect.INSTRUCTIONS[opcode][0]
                name = mnemonic
                if origin in self.machine.fused[index]:  # one step runs the allocation's two instructions
                    name = f"{mnemonic} + {vm_dialect.INSTRUCTIONS[f.code[origin + 1][0]][0]}"
                if mnemonic == "invoke_kernel":
                    name = f"kernel @{program.kernels[values[0]].name}"
                elif mnemonic == "invoke_host":
                    name = f"host @{self.machine.host_functions[values[1]].sym_name.data}"
                elif mnemonic == "invoke":
                    name = f"invoke @{program.functions[values[1]].name}"
                made.append((name, CATEGORIES.get(mnemonic, "vm"), {"function": f.name, "instruction": origin}))
            self.labels[index] = made
        return made

    def _event(self, name: str, category: str, start: int, end: int, args: dict[str, Any]) -> None:
        tid = threading.get_ident()
        if tid not in self.threads:  # (named once, not per event)
            self.threads[tid] = threading.current_thread().name
        self.events.append({"name": name, "cat": category, "ph": "X", "ts": (start - self.origin) / 1e3,
                            "dur": (end - start) / 1e3, "pid": os.getpid(), "tid": tid, "args": args})

    def step(self, index: int, pc: int, start: int, end: int) -> None:
        """Step `pc` of function `index` ran from `start` to `end` (ns, `perf_counter_ns`)."""
        name, category, args = self._labels(index)[pc]
        self._event(name, category, start, end, args)

    def enter(self, index: int) -> None:
        self.open.append((index, time.perf_counter_ns()))

    def leave(self) -> None:
        index, start = self.open.pop()
        self._event(f"@{self.machine.program.functions[index].name}", "function", start, time.perf_counter_ns(),
                    {})

    def write(self, path: str | os.PathLike[str]) -> None:
        """The events as a JSON trace (open it in https://ui.perfetto.dev or chrome://tracing)."""
        names = [{"name": "thread_name", "ph": "M", "pid": os.getpid(), "tid": tid, "args": {"name": name}}
                 for tid, name in self.threads.items()]
        Path(path).write_text(json.dumps({"traceEvents": names + self.events, "displayTimeUnit": "ms"}))
