"""What the tests share, found one way: `from tests.helpers import ...`.

- paths: `ROOT` (the checkout), `FIXTURES` (tests/fixtures);
- fixture files: `read_cases` (`## title` / query-line corpora), `load_fixture` (metric cases);
- `ScriptedModelStandIn`: an LLM stand-in that replays scripted replies, for unit tests of the
  loop only (every other test runs a real model or a real endpoint);
- recorded runs: `recorded` and `write_cell` write the attempts a loop could have made, so the
  evaluation and analysis run for real without a model; `write_scored_run` writes the tiny dataset's
  scored run (conftest's `scored_run`);
- `konv13_replies`: the scripted replies of the conversation tests' stand-ins for dialogue konv-13.

Submodules: `fault_server` (a loopback OpenAI-compatible endpoint that fails on cue),
`llama_server.py` (llama.cpp's server, run as a script), `neo4j` (the live-server fixtures,
registered in conftest.py), `lab` (a finished run for the notebook tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from t2c_lib.agent import Attempt, ErrorType, ValidationResult
from t2c_lib.llm.base import Completion, Usage
from t2c_lib.runs.layout import Cell
from t2c_lib.runs.runlog import AttemptLog

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
GUARD_FIXTURES = FIXTURES / "guard"
METRIC_FIXTURES = FIXTURES / "metrics"


def read_cases(path: Path) -> list[tuple[str, str]]:
    """Cases of a `## title` / query-lines file as (title, query); text before the first `##` is ignored."""
    cases: list[tuple[str, str]] = []
    title: str | None = None
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            if title is not None:
                cases.append((title, "\n".join(lines).strip("\n")))
            title, lines = line[3:].strip(), []
        elif title is not None:
            lines.append(line)
    if title is not None:
        cases.append((title, "\n".join(lines).strip("\n")))
    return cases


WRITE_CASES = read_cases(GUARD_FIXTURES / "write_queries.cypher")
READ_CASES = read_cases(GUARD_FIXTURES / "read_queries.cypher")


def load_fixture(name: str):
    """The one reader of the metric fixture files."""
    return yaml.safe_load((METRIC_FIXTURES / name).read_text(encoding="utf-8"))


class ScriptedModelStandIn:
    """A stand-in for an LLM in loop unit tests only: replays scripted responses and records each request."""

    model_id = "scripted-stand-in"

    def __init__(self, responses: Sequence[str], prompt_tokens: int = 100, completion_tokens: int = 20) -> None:
        self.responses = list(responses)
        self.requests: list[dict] = []
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None) -> Completion:
        self.requests.append(
            {"messages": list(messages), "temperature": temperature, "max_tokens": max_tokens, "stop": stop}
        )
        if not self.responses:
            raise AssertionError("the loop asked the stand-in more often than scripted")
        text = self.responses.pop(0)
        return Completion(text, Usage(self.prompt_tokens, self.completion_tokens), latency_s=0.25, model=self.model_id)


STEPS = ("guard", "syntax", "schema", "properties", "execution", "non_empty")
WRONG = "MATCH (m:Movie) RETURN m.title"


FAILING_STEP = {ErrorType.SYNTAX_ERROR: "syntax", ErrorType.SCHEMA_ERROR: "schema", ErrorType.EMPTY_RESULT: "non_empty"}
"""The validator that rejects a recorded attempt with this error."""


def recorded(
    qid: str, iteration: int, query: str, error: ErrorType | None = None, *, kind: str = "generate"
) -> Attempt:
    """An attempt as the loop or a strategy would have logged it; `error` names why the chain rejected it."""
    fails_at = FAILING_STEP[error] if error is not None else None
    validations = []
    for step in STEPS:
        failed = step == fails_at
        validations.append(ValidationResult(step, not failed, error if failed else None, "x" if failed else ""))
        if failed:
            break
    return Attempt(
        question_id=qid,
        iteration=iteration,
        prompt_hash="p",
        raw_response=query,
        query=query,
        validations=validations,
        ok=error is None,
        error_type=error,
        feedback="fb" if error else None,
        prompt_tokens=100,
        completion_tokens=20,
        kind=kind,
    )


def write_cell(run_dir, cell: Cell, questions, plan) -> None:
    log = AttemptLog(cell.directory(run_dir))
    for item in questions:
        attempts = plan(item)
        for attempt in attempts:
            log.append_attempt(attempt)
        log.append_question({"question_id": item.id, "status": "SUCCESS" if attempts[-1].ok else "FAILED"})


def write_scored_run(run_dir: Path, dataset, store, loop_folder: str = "feedback") -> Path:
    """A scored run of the tiny dataset in `run_dir`: a single-pass and a feedback cell per schema format.

    Single-pass makes one syntax error, answers one question right and one wrong-but-valid; the
    feedback loop recovers the first question at its second attempt. `loop_folder` names the loop's
    cells (`agentic`: the thesis's legacy name, which runs recorded before the rename still carry)."""
    from t2c_lib.study.evaluation import evaluate_cell

    def single(item):
        if item.id == "tiny-001":
            return [recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR)]
        if item.id == "tiny-002":
            return [recorded(item.id, 1, item.cypher, None)]
        return [recorded(item.id, 1, WRONG, None)]

    def feedback(item):
        if item.id == "tiny-001":
            return [
                recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR),
                recorded(item.id, 2, item.cypher, None),
            ]
        return single(item)

    for schema_format in ("full_schema", "only_paths"):
        for mode, plan, budget in (("single-pass", single, 1), (loop_folder, feedback, 3)):
            cell = Cell(mode, "Zero-Shot", schema_format)
            write_cell(run_dir, cell, dataset.questions, plan)
            evaluate_cell(cell, run_dir, dataset.questions, dataset, store, "kg-axel", budget, 10.0, scoring="kg-axel")
    return run_dir


def konv13_replies(dialogue) -> list[str]:
    """A stand-in's replies for dialogue konv-13, in call order: turn 1 right, turn 2 routed as a new question
    (a query for another course), turn 3 answered with its gold query; router, query, answer template each turn."""
    first, _, third = (t.cypher for t in dialogue.turns)
    return [
        "EXECUTE_QUERY",
        f"<cypher>{first}</cypher>",
        "Kodenya {m.kode}.",
        "EXECUTE_QUERY",
        "<cypher>MATCH (m:MK {nama: 'Pembelajaran Mesin'}) RETURN m.nama</cypher>",
        "{m.nama}",
        "REQUEST_MODIFICATION",
        f"<cypher>{third}</cypher>",
        "{m.kode}",
    ]
