"""`tools/import_layers.py`: the parts of t2c_lib stack in a known number of import layers.

The layers are counted on the real package with the same import edges `tools/import_cycles.py`
reads (function-level and `TYPE_CHECKING` imports included), so a lazy import that reaches up a
layer lengthens the chain and fails here with the chain that grew.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "tools"))

from import_cycles import cycles, edges, module_names
from import_layers import layers, longest_chain, part_graph, part_of

LAYERS = 11
"""Issue 40's target was 8, reached by moving `QueryResult` into the leaf `query_result.py`, the value index
into `graph/`, and the feedback templates' hashes out of `prompts/templates.py` (10 layers before).
Issue 54 moved the publishing modules out of `study/` into their own `publish/` (imported by `cli/`
only): publishing reads a study's files (then `study.layout`, `study.analysis`), so the new part sits
between `cli` and `study` and the chain is one part longer (cli -> publish -> study -> ...), with
no arrow back up and no circle; `study/` itself lost a second job, not a layer. The same issue's small top
level moved the file formats (`gzipped`, `outputs`, `yaml_file`) into `files/` (layer 2) and `query_result` into
`cypher/` (layer 3, which both its importers, the stores and the records, already import): still 9.
Then `study/` gave up two more jobs: a run folder's files (layout, attempt log, `summary.json`, the gold screen's
note) became `runs/`, and the reporting modules (analysis, comparison, figures, failures) `report/`, which reads
`runs/` and never the study. Writer and readers now share a format below both instead of the readers reaching
into the runner's package, so the chain is two parts longer (publish -> study -> report -> runs -> agent), with
no arrow back up and no circle: 11."""


def test_a_module_belongs_to_its_top_level_part() -> None:
    assert part_of("t2c_lib.graph.base") == "graph"
    assert part_of("t2c_lib.graph") == "graph"
    assert part_of("t2c_lib.records") == "records"
    assert part_of("t2c_lib") == "t2c_lib"


def test_imports_inside_a_part_do_not_count_and_layers_stack_on_the_highest_import() -> None:
    modules = {
        "t2c_lib.cli.main": {"t2c_lib.study.steps", "t2c_lib.errors"},
        "t2c_lib.study.steps": {"t2c_lib.study.layout", "t2c_lib.records"},
        "t2c_lib.study.layout": {"t2c_lib.errors"},
        "t2c_lib.records": {"t2c_lib.errors"},
        "t2c_lib.errors": set(),
    }
    parts = part_graph(modules)
    assert parts == {"cli": {"study", "errors"}, "study": {"records", "errors"}, "records": {"errors"}, "errors": set()}
    layer = layers(parts)
    assert layer == {"errors": 1, "records": 2, "study": 3, "cli": 4}
    assert longest_chain(parts, layer) == ["cli", "study", "records", "errors"]


def test_a_circle_between_parts_is_found_before_layers_are_counted() -> None:
    parts = part_graph({"t2c_lib.a.x": {"t2c_lib.b.y"}, "t2c_lib.b.y": {"t2c_lib.a.z"}, "t2c_lib.a.z": set()})
    assert cycles(parts) == [["a", "b"]]


def test_the_package_has_the_layers_it_is_known_to_have() -> None:
    parts = part_graph(edges(module_names(), with_parents=False))
    assert not cycles(parts)
    layer = layers(parts)
    chain = longest_chain(parts, layer)
    assert len(chain) == LAYERS, f"{len(chain)} layers: " + " -> ".join(chain)
    assert chain[0] == "cli" and chain[-1] == "errors", chain
    assert layer["errors"] == 1, parts["errors"]  # the leaf: it imports nothing of the package
    modules = edges(module_names(), with_parents=False)
    for leaf in ("t2c_lib.cypher.query_result", "t2c_lib.files.outputs"):  # leaves inside their parts
        assert not {m for m in modules[leaf] if m.startswith("t2c_lib")}, (leaf, modules[leaf])
    assert layer["files"] == 2, parts["files"]  # the file formats import only `errors`
    # a run folder's files lie below their readers and their writer: the reports never reach the study
    assert "study" not in parts["report"] and not {"study", "report"} & parts["runs"], (parts["report"], parts["runs"])
    # issue 40's three reaches stay removed: the records, the validators and the prompts reach no higher
    assert (
        "graph" not in parts["records"] and "linking" not in parts["validation"] and "feedback" not in parts["prompts"]
    )


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_the_tool_prints_the_count_and_the_chain() -> None:
    done = subprocess.run(
        [sys.executable, "tools/import_layers.py", "--max", str(LAYERS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f", {LAYERS} import layers" in done.stdout
    assert "longest chain: cli -> " in done.stdout
    fewer = subprocess.run(
        [sys.executable, "tools/import_layers.py", "--max", str(LAYERS - 1)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert fewer.returncode == 1 and f"more than --max {LAYERS - 1}" in fewer.stdout
