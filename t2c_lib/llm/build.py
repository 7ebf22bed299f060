"""The llama.cpp build that runs the packaged models: its fingerprint joins every local cache key, manifest and signature.

Greedy replies depend on the arithmetic of the build, not only on the weights: the same
llama-cpp-python and GGUF built for AVX-512 and for AVX2 only gave different replies to 11 of
52 prompts (RESULTS.md). The fingerprint is what the loaded library itself reports
(`llama_print_system_info`: the instruction-set features it was compiled with, per backend),
with the llama-cpp-python version; `make setup` builds the portable level `x86-64-v3` by
default (`LLAMA_BUILD=native` for this CPU's own). `python -m t2c_lib.llm.build [--expect LEVEL]`
prints it and, with `--expect`, fails when the installed build is another level.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import sys
from dataclasses import dataclass
from functools import lru_cache

DISTRIBUTION = "llama-cpp-python"

# x86-64 micro-architecture levels (psABI) as far as llama.cpp's CPU backend reports their features.
X86_64_V3 = frozenset({"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"})
X86_64_V4 = X86_64_V3 | {"AVX512"}
# Features of the CPU backend that are build options, not instruction sets; they are kept in the fingerprint.
NOT_ISA = frozenset({"LLAMAFILE", "OPENMP", "REPACK", "KLEIDIAI", "ACCELERATE", "BLAS"})


@dataclass(frozen=True)
class Backend:
    """One ggml backend of the build and the features it reports (`AVX2`, or `SVE_CNT=16` for a value other than 1)."""

    name: str
    features: tuple[str, ...]


@dataclass(frozen=True)
class LlamaBuild:
    """The llama-cpp-python version and the features its compiled llama.cpp reports."""

    version: str
    backends: tuple[Backend, ...]

    @property
    def cpu_features(self) -> tuple[str, ...]:
        return next((b.features for b in self.backends if b.name == "CPU"), ())

    @property
    def level(self) -> str:
        """`x86-64-v3` or `x86-64-v4` when the CPU features are exactly that level's, with `+` when beyond it."""
        isa = {f for f in self.cpu_features if f not in NOT_ISA}
        for name, needed in (("x86-64-v4", X86_64_V4), ("x86-64-v3", X86_64_V3)):
            if needed <= isa:
                return name if isa == needed else f"{name}+"
        return platform.machine().lower() or "unknown"

    @property
    def fingerprint(self) -> str:
        """The readable, stable form every cache key and manifest carries."""
        parts = [f"{DISTRIBUTION} {self.version} {self.level} [{' '.join(self.cpu_features)}]"]
        parts += [f"{b.name} [{' '.join(b.features)}]" for b in self.backends if b.name != "CPU"]
        return " ".join(parts)

    @property
    def digest(self) -> str:
        """12 hex digits of sha256 over the fingerprint."""
        return hashlib.sha256(self.fingerprint.encode("utf-8")).hexdigest()[:12]

    @property
    def short(self) -> str:
        """The compact form for a run signature: version, level and digest."""
        return f"{self.version}/{self.level}@{self.digest}"


def parse_system_info(text: str) -> tuple[Backend, ...]:
    """Backends and features from `llama_print_system_info` (`CPU : SSE3 = 1 | AVX2 = 1 | ... |`)."""
    backends: list[Backend] = []
    name: str | None = None
    features: list[str] = []
    for item in (part.strip() for part in text.split("|")):
        if " : " in item:  # a new backend: `Name : FIRST = 1`
            if name is not None:
                backends.append(Backend(name, tuple(features)))
            name, item = (s.strip() for s in item.split(" : ", 1))
            features = []
        if not item or name is None or "=" not in item:
            continue
        key, value = (s.strip() for s in item.split("=", 1))
        if value == "0":
            continue
        features.append(key if value == "1" else f"{key}={value}")
    if name is not None:
        backends.append(Backend(name, tuple(features)))
    return tuple(backends)


def passive_openmp_wait() -> None:
    """Let llama.cpp's OpenMP threads wait passively unless the user chose otherwise (`local._load` says why).

    libgomp reads the setting once, when it loads with llama_cpp, so whoever imports llama_cpp first sets it.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@lru_cache(maxsize=1)
def installed_build() -> LlamaBuild:
    """The build this process loads (the llama_cpp that `import llama_cpp` finds); read once per process."""
    passive_openmp_wait()
    import llama_cpp

    # The module's own version: a copy earlier on sys.path (a `--target` build) may differ from the dist metadata.
    dist_version = str(getattr(llama_cpp, "__version__", "unknown"))
    info = llama_cpp.llama_print_system_info()
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    return LlamaBuild(dist_version, parse_system_info(text))


def build_fingerprint() -> str:
    """The installed build's fingerprint, or `llama-cpp-python missing` where it is not installed."""
    try:
        return installed_build().fingerprint
    except ImportError:
        return f"{DISTRIBUTION} missing"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the llama.cpp build's fingerprint (what joins cache keys).")
    parser.add_argument("--expect", help="fail unless the build's level is this (x86-64-v3 for `make setup`'s default)")
    args = parser.parse_args(argv)
    build = installed_build()
    print(f"llama.cpp build: {build.fingerprint} ({build.digest})")
    if args.expect and build.level != args.expect:
        print(f"expected level {args.expect}, the installed build is {build.level}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
