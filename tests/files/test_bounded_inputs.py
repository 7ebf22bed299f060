"""Issue 55, item 5: every YAML file and every numeric parameter t2c reads is bounded.

A YAML alias bomb (a few hundred bytes that expand to billions of nodes), deep nesting, a
self-referring alias or an oversized file is refused in one line naming the file, before any
structure is built, wherever t2c reads YAML (dataset files, parameter files, packaged
templates). A numeric parameter outside its range (`workers: 100000000`, `.nan` seconds) is
refused naming the key, the value and the range, in a parameter file, an override or a
notebook's papermill value. The committed files all still read, to the same data.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from t2c_lib.datasets import DatasetError, load_dataset
from t2c_lib.files.yaml_file import MAX_BYTES, YamlFileError, parse_yaml, read_yaml
from t2c_lib.study.notebook_params import INJECTED_MARK, PARAMETERS_MARK, ParameterOutOfRange, check_parameters
from t2c_lib.study.param_bounds import BOUNDS
from t2c_lib.study.params import ParamsError, load_params, params_from_dict
from tests.helpers import FIXTURES, ROOT


def laughs(levels: int = 9, width: int = 9) -> str:
    """A billion-laughs document: `width`**`levels` strings from `levels` * `width` aliases (under a key of its own)."""
    lines = ["lol0: &l0 [" + ", ".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"lol{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


BOMBS = {
    "billion laughs": laughs(),
    "laughs in mappings": "m0: &m0 {a: lol, b: lol, c: lol, d: lol, e: lol, f: lol, g: lol, h: lol}\n"
    + "".join(f"m{i}: &m{i} {{" + ", ".join(f"{k}: *m{i - 1}" for k in "abcdefgh") + "}\n" for i in range(1, 9)),
    "deep nesting": "x: " + "[" * 200 + "]" * 200 + "\n",
    "self-reference": "x: &x [1, *x]\n",
    "many aliases": "a: &a 1\nb: [" + ", ".join(["*a"] * 1000) + "]\n",
}


def tiny_copy(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    shutil.copytree(FIXTURES / "tiny", root)
    return root


@pytest.mark.parametrize("kind", sorted(BOMBS))
@pytest.mark.parametrize("name", ["dataset.yaml", "schema.yaml", "examples.yaml", "conversations.yaml"])
def test_a_yaml_bomb_in_a_dataset_file_is_refused_at_once_naming_the_file(tmp_path, name, kind):
    root = tiny_copy(tmp_path)
    (root / name).write_text(BOMBS[kind], encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(DatasetError) as info:
        load_dataset(root)
    assert time.perf_counter() - started < 5
    message = str(info.value)
    assert name in message and "\n" not in message
    assert "refused" in message, message  # the bound, not some later check of the file's content


@pytest.mark.parametrize("kind", sorted(BOMBS))
def test_a_yaml_bomb_in_a_parameter_file_is_refused_naming_the_file(tmp_path, kind):
    path = tmp_path / "bomb.yaml"
    path.write_text("run_id: bomb\n" + BOMBS[kind], encoding="utf-8")
    with pytest.raises(ParamsError) as info:
        load_params(path)
    assert str(info.value).startswith(f"{path}: ") and "refused" in str(info.value)


def test_each_bound_says_what_it_refused():
    reasons = {}
    for kind, text in BOMBS.items():
        with pytest.raises(YamlFileError) as info:
            parse_yaml(text, "f.yaml")
        reasons[kind] = info.value.reason
    assert "expands to more than" in reasons["billion laughs"]
    assert "expands to more than" in reasons["laughs in mappings"]
    assert "nested more than 64 levels" in reasons["deep nesting"]
    assert "refers to a node from inside itself" in reasons["self-reference"]
    assert "more than 256 aliases" in reasons["many aliases"]


def test_nesting_past_the_parser_s_own_limit_is_one_line_too():
    with pytest.raises(YamlFileError) as info:
        parse_yaml("x: " + "[" * 200_000 + "]" * 200_000, "f.yaml")
    assert "\n" not in str(info.value) and ("nest" in info.value.reason or "depth" in info.value.reason)


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.yaml"
    with path.open("w", encoding="utf-8") as out:
        out.write("# " + "x" * MAX_BYTES + "\nrun_id: big\n")
    with pytest.raises(ParamsError, match=r"bytes, more than the 4194304 a YAML file may have"):
        load_params(path)
    root = tiny_copy(tmp_path)
    shutil.copy(path, root / "examples.yaml")
    with pytest.raises(DatasetError, match="examples.yaml.*more than the 4194304"):
        load_dataset(root)


def test_a_syntax_error_is_still_one_line_with_its_position(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("run_id: x\nprompt_types: [Zero-Shot\nmodel: local\n", encoding="utf-8")
    with pytest.raises(ParamsError, match=r"not valid YAML at line \d+, column \d+"):
        load_params(path)


def test_aliases_within_the_bounds_still_read():
    text = "base: &b {k: 1}\ncopy: *b\nmerged: {<<: *b, j: 2}\nlist: &l [1, 2]\nagain: *l\n"
    assert parse_yaml(text, "f.yaml") == yaml.safe_load(text)


def test_every_committed_yaml_file_reads_to_the_same_data():
    files = subprocess.run(
        ["git", "ls-files", "*.yaml", "*.yml", "*.cff"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(files) > 40
    for name in files:
        assert read_yaml(ROOT / name) == yaml.safe_load((ROOT / name).read_text(encoding="utf-8")), name


def test_no_module_of_the_package_loads_yaml_but_the_bounded_reader():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "t2c_lib").rglob("*.py")
        if path.name != "yaml_file.py"
        and any(
            word in path.read_text(encoding="utf-8")
            for word in ("yaml.load", "yaml.safe_load", "yaml.compose", "yaml.full_load", "yaml.unsafe_load")
        )
    ]
    assert offenders == []


# --- numeric parameters -----------------------------------------------------------------------

HUGE = [
    ("test_suite_copies", 100_000_000),
    ("workers", 100_000_000),
    ("max_iterations", 1_000_000_000),
    ("max_tokens", 1_000_000_000_000),
    ("linking_k", 10**9),
    ("linking_rel_k", 10**6),
    ("repeat_guard_retries", 10**6),
    ("vote_k", 10**6),
    ("limit", 10**12),
    ("seed", 2**64),
    ("sample_seed", -1),
    ("query_timeout_s", 1e12),
    ("requests_per_minute", 1e300),
]


@pytest.mark.parametrize("key, value", HUGE)
def test_a_number_past_its_range_is_refused_naming_key_value_and_range(key, value):
    with pytest.raises(ParamsError) as info:
        params_from_dict({key: value}, source="p.yaml")
    message = str(info.value)
    assert message.startswith(f"p.yaml: {key}={value!r}: ") and "\n" not in message
    assert "at most" in message or "between" in message


@pytest.mark.parametrize("key", ["query_timeout_s", "requests_per_minute", "temperature_first", "vote_temperature"])
@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_nan_and_infinity_are_refused_in_a_parameter_file(tmp_path, key, value):
    path = tmp_path / "p.yaml"
    path.write_text(f"run_id: x\n{key}: {value}\n", encoding="utf-8")
    with pytest.raises(ParamsError, match=f"{key}="):
        load_params(path)


def test_the_largest_allowed_value_of_each_bound_is_taken():
    for key, bound in BOUNDS.items():
        value = bound.high if not bound.integer else int(bound.high)
        assert getattr(params_from_dict({key: value}), key) == value, key


def test_overrides_are_bounded_too():
    with pytest.raises(ParamsError, match=r"workers=100000: a positive integer, at most 256"):
        params_from_dict({}).with_overrides(workers=100_000)


def test_every_committed_parameter_file_still_loads():
    files = sorted((ROOT / "params").glob("*.yaml"))
    assert len(files) >= 15
    for path in files:
        load_params(path)


def _history(injected: str) -> list[str]:
    declared = (
        f"{PARAMETERS_MARK} -p NAME VALUE)\nparams_file = 'params/quick.yaml'\nmax_iterations = None\nlimit = None\n"
    )
    return [declared, f"{INJECTED_MARK}\n{injected}"]


@pytest.mark.parametrize("injected", ["max_iterations = 1000000000\n", "limit = 1e12\n", "max_iterations = -3\n"])
def test_a_notebook_value_past_its_range_is_refused_in_one_line(injected):
    with pytest.raises(ParameterOutOfRange) as info:
        check_parameters(_history(injected))
    assert "at most" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("injected", ["max_iterations = 5\n", "limit = 'all'\n", "limit = None\n", "limit = 20\n"])
def test_a_notebook_value_in_range_passes(injected):
    check_parameters(_history(injected))


@pytest.mark.parametrize("value", [10**9, float("inf"), float("nan"), -(10**7)])
def test_a_later_strategy_s_numeric_option_is_bounded_too(value):
    from tests.agent.test_strategy_declarations import OPTION  # registers a strategy with a numeric option

    with pytest.raises(ParamsError, match=f"p.yaml: {OPTION}=.*: a number between -1000000 and 1000000"):
        params_from_dict({OPTION: value}, source="p.yaml")
    assert params_from_dict({OPTION: 0.3}).option(OPTION) == 0.3


@pytest.mark.parametrize(
    "option",
    [
        {"max_iterations": 10**9},
        {"max_tokens": 10**12},
        {"answer_max_tokens": 10**9},
        {"display_limit": 10**9},
        {"timeout_s": float("nan")},
        {"timeout_s": float("inf")},
    ],
)
def test_a_chat_option_past_its_range_is_refused_in_one_line(option):
    from t2c_lib.chat.settings import ChatSettings
    from t2c_lib.errors import InvalidValue

    with pytest.raises(InvalidValue) as refused:
        ChatSettings(**option)
    (key,) = option
    assert key in str(refused.value) and "at most" in str(refused.value) and "\n" not in str(refused.value)


def test_the_chat_s_largest_counts_are_taken():
    from t2c_lib.chat.settings import ChatSettings

    assert ChatSettings(max_iterations=20, max_tokens=32768, timeout_s=3600).max_iterations == 20
