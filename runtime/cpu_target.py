"""The CPU a program's kernels are compiled for: one frozen description.

`CpuTarget` says what the schedules need to know of a CPU (vector width, vector
registers, whether it has mask registers, FMA, cache sizes, cores) and what LLVM needs
to generate its code (CPU name, feature overrides). `host()` reads this machine (LLVM's
host CPU name and features, the caches from `/sys/devices/system/cpu`); `named("znver3")`
describes another CPU, for compiling code to run elsewhere or to test the schedules of
an ISA on a host that has a larger one (AVX2 code runs on an AVX-512 host). Passes get
the target from the module they transform (`dialects/target.py`, `#nimble.cpu`), never
from the host; the JIT gets it from the compiled program.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import cache

from nimble.errors import InputError

ISA_FEATURES: dict[str, tuple[str, ...]] = {
    "x86-64": ("sse2",),
    "x86-64-v2": ("sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt"),
    "avx": ("sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx"),
    "x86-64-v3": ("sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi", "bmi2"),
    "x86-64-v4": ("sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi", "bmi2",
                  "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"),
}
"""The features of each x86-64 ISA level that decide the code Nimble's kernels get
(vector width, FMA, half-precision conversions, masks)."""

KNOWN_CPUS: dict[str, tuple[str, int]] = {
    # name: (ISA level, L2 bytes per core)
    "x86-64": ("x86-64", 256 << 10),
    "x86-64-v2": ("x86-64-v2", 256 << 10), "nehalem": ("x86-64-v2", 256 << 10),
    "sandybridge": ("avx", 256 << 10), "ivybridge": ("avx", 256 << 10),
    "x86-64-v3": ("x86-64-v3", 256 << 10), "haswell": ("x86-64-v3", 256 << 10),
    "broadwell": ("x86-64-v3", 256 << 10), "skylake": ("x86-64-v3", 256 << 10),
    "alderlake": ("x86-64-v3", 1280 << 10), "znver1": ("x86-64-v3", 512 << 10),
    "znver2": ("x86-64-v3", 512 << 10), "znver3": ("x86-64-v3", 512 << 10),
    "x86-64-v4": ("x86-64-v4", 1 << 20), "skylake-avx512": ("x86-64-v4", 1 << 20),
    "cascadelake": ("x86-64-v4", 1 << 20), "icelake-server": ("x86-64-v4", 1280 << 10),
    "rocketlake": ("x86-64-v4", 512 << 10), "sapphirerapids": ("x86-64-v4", 2 << 20),
    "emeraldrapids": ("x86-64-v4", 2 << 20), "graniterapids": ("x86-64-v4", 2 << 20),
    "znver4": ("x86-64-v4", 1 << 20), "znver5": ("x86-64-v4", 1 << 20),
}
"""CPUs `named` describes (LLVM knows each by this name): their ISA level and L2."""


class TargetError(InputError, ValueError):
    """A CPU name or feature list that cannot be used (unknown, malformed, or code the
    host cannot run)."""


class TargetWarning(UserWarning):
    """Code compiled for another CPU is compiled again for this one."""


def _closed(enabled: set[str]) -> frozenset[str]:
    """`enabled` without the features whose base is off (LLVM turns off AVX-512's
    extensions with `-avx512f`, and AVX2, FMA, F16C and AVX-512 with `-avx`)."""
    if "avx512f" not in enabled:
        enabled = {f for f in enabled if not f.startswith("avx512")}
    if "avx" not in enabled:
        enabled = {f for f in enabled if f not in ("avx2", "fma", "f16c") and not f.startswith("avx512")}
    return frozenset(enabled)


def _parse_features(text: str) -> dict[str, bool]:
    features: dict[str, bool] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        if item[0] not in "+-" or len(item) < 2:
            raise TargetError(f"CPU feature '{item}' must be '+name' or '-name'")
        features[item[1:]] = item[0] == "+"
    return features


@dataclass(frozen=True)
class CpuTarget:
    """A CPU as the schedules and the code generator see it."""

    cpu: str
    """LLVM's name for it (`haswell`, `znver3`, `skylake-avx512`, `x86-64-v2`)."""
    features: str = ""
    """LLVM feature overrides (`+avx512f,-fma`); the host's full list for `host()`."""
    enabled: frozenset[str] = field(default=frozenset(), compare=False)
    """The features the code may use (the CPU's, with the overrides applied)."""
    l1d: int = 32 << 10
    l2: int = 1 << 20
    l3: int = 8 << 20
    cores: int = 0
    """Cores (0: not known until run: those of the machine that runs it)."""

    @property
    def vector_bits(self) -> int:
        """Width of a vector register: 512 with AVX-512, 256 with AVX, else 128."""
        return 512 if "avx512f" in self.enabled else 256 if "avx" in self.enabled else 128

    @property
    def vector_registers(self) -> int:
        return 32 if "avx512f" in self.enabled or "neon" in self.enabled else 16

    @property
    def masks(self) -> bool:
        """Mask registers: a masked vector step costs what a full one does (AVX-512)."""
        return "avx512f" in self.enabled

    @property
    def fma(self) -> bool:
        return "fma" in self.enabled or "neon" in self.enabled

    def lanes(self, bits: int = 32) -> int:
        """Elements of `bits` bits in a vector register."""
        return self.vector_bits // bits

    @property
    def isa(self) -> str:
        """The widest ISA level its features reach (`x86-64-v3` for AVX2 + FMA)."""
        return next(level for level in ("x86-64-v4", "x86-64-v3", "avx", "x86-64-v2", "x86-64")
                    if set(ISA_FEATURES[level]) <= self.enabled or level == "x86-64")

    def describe(self) -> str:
        """One line for benchmark output and errors: `haswell (x86-64-v3, 256-bit vectors, 16 registers)`."""
        return f"{self.cpu} ({self.isa}, {self.vector_bits}-bit vectors, {self.vector_registers} registers)"

    def missing_on(self, host: CpuTarget) -> list[str]:
        """The ISA features this target's code may use that `host` lacks."""
        wanted = {f for level in ISA_FEATURES.values() for f in level} & self.enabled
        return sorted(wanted - host.enabled)


def check_runs_here(target: CpuTarget) -> None:
    """TargetError unless this machine can run code compiled for `target`."""
    here = host()
    missing = target.missing_on(here)
    if missing:
        raise TargetError(f"code compiled for {target.describe()} uses {', '.join(missing)}, which this CPU "
                          f"({here.cpu}) lacks: compile for cpu='host' (--cpu host) to run it here")


def named(cpu: str, features: str = "", cores: int = 0) -> CpuTarget:
    """A known CPU by LLVM's name, with feature overrides (`+avx512f,-fma`); another
    name only with the full list of its features (what `host()` has)."""
    if cpu not in KNOWN_CPUS and not features:
        raise TargetError(f"unknown CPU '{cpu}' (known: {', '.join(sorted(KNOWN_CPUS))}, or 'host')")
    level, l2 = KNOWN_CPUS.get(cpu, ("x86-64", 1 << 20))  # (another: its features say it all)
    enabled = set(ISA_FEATURES[level])
    for name, on in _parse_features(features).items():
        (enabled.add if on else enabled.discard)(name)
    return CpuTarget(cpu, features, _closed(enabled), l2=l2, cores=cores)


DEFAULT_VARIABLE = "NIMBLE_CPU"


def default() -> CpuTarget:
    """The target of a compile that names none: `$NIMBLE_CPU` (a CPU name, with feature
    overrides after a colon: `haswell`, `host:-avx512f`) where set, else the host."""
    spec = os.environ.get(DEFAULT_VARIABLE, "")
    if not spec:
        return host()
    cpu, _, features = spec.partition(":")
    try:
        return resolve(cpu, features)
    except TargetError as e:
        raise TargetError(f"${DEFAULT_VARIABLE}: {e}") from None


def resolve(cpu: str | None = None, features: str = "") -> CpuTarget:
    """`host` or a CPU name, with feature overrides (`-avx512f`): what `--cpu` and
    `--cpu-features` (`cpu=`, `cpu_features=`) take; None: `default()`."""
    if cpu is None or cpu == "host":
        return _with(default() if cpu is None else host(), features)
    return named(cpu, features)


def _with(base: CpuTarget, features: str) -> CpuTarget:
    """`base` with feature overrides."""
    if not features:
        return base
    changes = _parse_features(features)
    enabled = {f for f in base.enabled if changes.get(f, True)} | {f for f, on in changes.items() if on}
    return replace(base, features=",".join(f for f in [base.features, features] if f), enabled=_closed(enabled))


@cache
def host() -> CpuTarget:
    """This machine: LLVM's host CPU name and features, caches from sysfs."""
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features()
    caches = _sysfs_caches()
    return CpuTarget(llvm.get_host_cpu_name(), features.flatten(),
                     frozenset(name for name, on in features.items() if on),
                     l1d=caches.get(1, 32 << 10), l2=caches.get(2, 1 << 20), l3=caches.get(3, 8 << 20),
                     cores=os.cpu_count() or 1)


def _sysfs_caches(root: str = "/sys/devices/system/cpu/cpu0/cache") -> dict[int, int]:
    """Data (or unified) cache size in bytes per level, where sysfs tells it."""
    sizes: dict[int, int] = {}
    try:
        entries = sorted(e for e in os.listdir(root) if e.startswith("index"))
    except OSError:
        return sizes
    for entry in entries:
        try:
            with open(f"{root}/{entry}/level") as f:
                level = int(f.read())
            with open(f"{root}/{entry}/type") as f:
                kind = f.read().strip()
            with open(f"{root}/{entry}/size") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if kind != "Instruction" and digits.isdigit():
            sizes[level] = int(digits) * scale
    return sizes
