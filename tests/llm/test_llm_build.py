"""The llama.cpp build fingerprint: read from the loaded library, and named by manifests and signatures."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from t2c_lib.llm.build import Backend, LlamaBuild, installed_build, parse_system_info
from t2c_lib.study.manifest import model_build, run_signature
from tests.helpers import ROOT

PORTABLE_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)
NATIVE_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)


def test_portable_and_native_builds_read_as_their_levels() -> None:
    portable = LlamaBuild("0.3.36", parse_system_info(PORTABLE_INFO))
    native = LlamaBuild("0.3.36", parse_system_info(NATIVE_INFO))
    assert portable.level == "x86-64-v3" and native.level == "x86-64-v4+"
    assert portable.fingerprint == (
        "llama-cpp-python 0.3.36 x86-64-v3 [SSE3 SSSE3 AVX AVX2 F16C FMA BMI2 LLAMAFILE OPENMP REPACK]"
    )
    assert "AVX512_VNNI" in native.fingerprint and portable.digest != native.digest
    assert re.fullmatch(r"0\.3\.36/x86-64-v3@[0-9a-f]{12}", portable.short)
    # the same report gives the same fingerprint (it keys caches across processes and machines)
    assert LlamaBuild("0.3.36", parse_system_info(PORTABLE_INFO)).digest == portable.digest
    # another llama-cpp-python over the same instruction set is another build
    assert LlamaBuild("0.3.37", parse_system_info(PORTABLE_INFO)).digest != portable.digest
    # AVX-512 alone on top of v3 is v4
    v4 = PORTABLE_INFO.replace("BMI2 = 1 |", "BMI2 = 1 | AVX512 = 1 |")
    assert LlamaBuild("0.3.36", parse_system_info(v4)).level == "x86-64-v4"


def test_other_backends_and_valued_features_are_kept() -> None:
    info = "CPU : NEON = 1 | ARM_FMA = 1 | SVE_CNT = 16 | OPENMP = 1 | Metal : EMBED_LIBRARY = 1 | BF16 = 0 | "
    backends = parse_system_info(info)
    assert backends == (
        Backend("CPU", ("NEON", "ARM_FMA", "SVE_CNT=16", "OPENMP")),
        Backend("Metal", ("EMBED_LIBRARY",)),
    )
    assert LlamaBuild("0.3.36", backends).fingerprint.endswith("[NEON ARM_FMA SVE_CNT=16 OPENMP] Metal [EMBED_LIBRARY]")
    assert parse_system_info("") == ()


def test_installed_build_is_what_the_loaded_library_reports() -> None:
    import llama_cpp

    build = installed_build()
    assert build.version == llama_cpp.__version__ == "0.3.36"
    assert build.backends == parse_system_info(llama_cpp.llama_print_system_info().decode())
    assert "AVX2" in build.cpu_features or build.level not in ("x86-64-v3", "x86-64-v4", "x86-64-v4+")


def test_manifest_and_signature_name_the_build_of_a_packaged_model() -> None:
    build = installed_build()
    assert model_build("local/qwen2.5-coder-1.5b@fa4cf2ab36a9") == {
        "llama_build": {"fingerprint": build.fingerprint, "id": build.short}
    }
    assert model_build("qwen2.5-coder:3b") == {}  # an endpoint's engine is not known here
    manifest = {
        "package_version": "0.1.0",
        "dataset": "kurikulum",
        "dataset_hash": "0" * 64,
        "store": "ladybug",
        "model_id": "local/qwen2.5-coder-1.5b@fa4cf2ab36a9",
        "validators": ["guard"],
        "template_hashes": {"en": "a" * 64},
        "parameters": {"max_iterations": 3, "temperature_first": 0.0, "temperature_refine": 0.1},
    }
    assert "|build:" not in run_signature(manifest)
    signed = run_signature({**manifest, **model_build(manifest["model_id"])})
    assert signed.endswith(f"|build:{build.short}")
    other = {"fingerprint": "llama-cpp-python 0.3.36 x86-64-v4+ [...]", "id": "0.3.36/x86-64-v4+@0123456789ab"}
    assert run_signature({**manifest, "llama_build": other}) != signed


@pytest.mark.slow  # a subprocess
def test_the_build_command_checks_the_level() -> None:
    build = installed_build()
    ok = subprocess.run(
        [sys.executable, "-m", "t2c_lib.llm.build", "--expect", build.level], cwd=ROOT, capture_output=True, text=True
    )
    assert ok.returncode == 0 and ok.stdout.strip() == f"llama.cpp build: {build.fingerprint} ({build.digest})"
    wrong = subprocess.run(
        [sys.executable, "-m", "t2c_lib.llm.build", "--expect", "x86-64-v2"], cwd=ROOT, capture_output=True, text=True
    )
    assert wrong.returncode == 1 and f"the installed build is {build.level}" in wrong.stderr
