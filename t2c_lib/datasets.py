"""A dataset: schema spec, node/relationship rows, ground-truth items and few-shot examples.

Everything is checked strictly on load: a malformed file fails with a `DatasetError` that
names the file, the row and the problem, before any database or model is touched. The
file format is described in `data/README.md`.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from t2c_lib import config
from t2c_lib.config import LANGUAGES
from t2c_lib.errors import InvalidValue
from t2c_lib.files.outputs import decode_json
from t2c_lib.files.yaml_file import YamlFileError, check_size, parse_yaml
from t2c_lib.schema import PropType

REL_ENDPOINT_COLUMNS = ("from_label", "from_id", "to_label", "to_id")
NODE_ID_COLUMN = "id"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What every label, relationship type, property name, node/relationship CSV column and dataset name must match.

A dataset is input from anywhere: its names become table names in DDL, file names (`nodes/<label>.csv`)
and folder names (the store's database under the cache), so no quote, bracket, space, dot or slash.
"""
_SHOWN_NAME = 60  # characters of a refused name the message shows
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.csv")  # ground_truth.file: a name, no folder, no `..` out


class DatasetError(InvalidValue):
    """A dataset file is malformed; the message names the file, the row and the problem."""

    def __init__(self, path: Path | str, problem: str, row: int | None = None) -> None:
        where = f"{_display(path)}" + (f", row {row}" if row is not None else "")
        super().__init__(f"{where}: {problem}")
        self.path = Path(path)
        self.row = row
        self.problem = problem


@dataclass(frozen=True)
class RelSpec:
    """A relationship type: its allowed (source, target) label pairs and its properties."""

    endpoints: tuple[tuple[str, str], ...]
    properties: dict[str, PropType]


@dataclass(frozen=True)
class SchemaSpec:
    """The declared schema (`schema.yaml`): creates the tables; only its descriptions reach a prompt.

    `descriptions` maps `Label`, `REL_TYPE`, `Label.property` and `REL_TYPE.property` to the
    hand-written text that says what the element means (rendered when `schema_descriptions`).
    """

    nodes: dict[str, dict[str, PropType]]
    rels: dict[str, RelSpec]
    descriptions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeRow:
    """One node: its load key (unique within the label) and its non-null properties."""

    key: str
    properties: dict[str, Any]


@dataclass(frozen=True)
class RelRow:
    """One relationship between two nodes given by label and load key."""

    from_label: str
    from_key: str
    to_label: str
    to_key: str
    properties: dict[str, Any]


@dataclass(frozen=True)
class GroundTruthItem:
    """One question with its gold Cypher and its strata (e.g. reasoning level, complexity)."""

    id: str
    question: str
    cypher: str
    strata: dict[str, str]


@dataclass(frozen=True)
class Example:
    """A few-shot example from a dataset's `examples.yaml`; `reasoning` feeds chain-of-thought prompts.

    The one example type: the dataset reads it and the prompt builder (`prompts.builder`) renders it.
    """

    question: str
    cypher: str
    reasoning: str = ""

    @classmethod
    def coerce(cls, item: Any) -> Example:
        """Accept an Example, a dict from YAML, or any object with these attributes."""
        if isinstance(item, cls):
            return item
        get = item.get if isinstance(item, dict) else (lambda k, d=None: getattr(item, k, d))
        question, cypher = get("question"), get("cypher")
        if not question or not cypher:
            raise ValueError(f"few-shot example needs `question` and `cypher`, got {item!r}")
        return cls(str(question).strip(), str(cypher).strip(), str(get("reasoning", "") or "").strip())


CONVERSATIONS_FILE = "conversations.yaml"
TEST_SPLIT = "test"
DEV_SPLIT = "dev"
SPLITS = (TEST_SPLIT, DEV_SPLIT)
"""`test`: the ground truth the study reports; `dev`: questions for choosing designs (choose on dev, report on test)."""
DEV_DIR = "dev"
DEV_QUESTIONS = f"{DEV_DIR}/questions.csv"
"""The development set: the ground truth's columns (extra columns allowed), questions apart from the test split's."""
INTENTS = ("EXECUTE_QUERY", "REQUEST_MODIFICATION", "ACKNOWLEDGE", "UNKNOWN")
"""A dialogue turn's expected intent (the names of `t2c_lib.chat.intent.Intent`)."""
QUERY_INTENTS = ("EXECUTE_QUERY", "REQUEST_MODIFICATION")
"""Intents whose turns carry a gold query."""
FOLLOW_UP_KINDS = ("add_column", "drop_column", "filter", "value", "sort", "limit", "group", "count")
"""What a REQUEST_MODIFICATION turn changes (its optional `kind`): a returned column added or dropped, a filter
added, a compared value swapped, a sort, a limit, a grouping, a count instead of a list (or the reverse)."""
DEV_CONVERSATIONS = f"{DEV_DIR}/{CONVERSATIONS_FILE}"
"""The development dialogues: for choosing a conversation design, apart from the test set's."""


@dataclass(frozen=True)
class DialogueTurn:
    """One user message of a dialogue, its expected intent and (query turns) its gold Cypher."""

    message: str
    intent: str
    cypher: str = ""
    kind: str = ""  # a REQUEST_MODIFICATION turn's FOLLOW_UP_KINDS entry; empty when the file names none


@dataclass(frozen=True)
class Dialogue:
    """A hand-written conversation (`conversations.yaml`); a modification turn modifies the previous query turn."""

    id: str
    turns: tuple[DialogueTurn, ...]
    title: str = ""


@dataclass(frozen=True)
class GroundTruthSpec:
    """Where the ground truth is and what its columns mean."""

    file: str
    question: str
    cypher: str
    strata: dict[str, tuple[str, ...]]


@dataclass
class Dataset:
    """A loaded, checked dataset directory."""

    name: str
    path: Path
    language: str
    description: str
    schema_spec: SchemaSpec
    ground_truth_spec: GroundTruthSpec
    nodes: dict[str, list[NodeRow]]
    rels: dict[str, list[RelRow]]
    questions: list[GroundTruthItem]
    examples: list[Example]
    hash: str
    settings: dict[str, Any] = field(default_factory=dict)
    gold_exclusions: dict[str, str] = field(default_factory=dict)  # question id -> why it is no ground truth
    conversations: list[Dialogue] = field(default_factory=list)  # conversations.yaml (optional)

    @property
    def strata_columns(self) -> list[str]:
        return list(self.ground_truth_spec.strata)

    def question(self, question_id: str) -> GroundTruthItem:
        for item in self.questions:
            if item.id == question_id:
                return item
        raise DatasetError(self.path, f"no question {question_id!r}")

    def in_reverse_row_order(self) -> Dataset:
        """The same graph with every node and relationship file read bottom-up.

        Loaded into a store, it makes the engine meet the rows in the opposite order, so a
        gold query whose answer depends on row order (LIMIT over ties, ties under ORDER BY)
        answers differently there. Name and hash stay: it is the same dataset version.
        """
        return replace(
            self,
            nodes={label: rows[::-1] for label, rows in self.nodes.items()},
            rels={rel_type: rows[::-1] for rel_type, rows in self.rels.items()},
        )

    def expected_counts(self) -> dict[str, int]:
        """Node counts per label and relationship counts per type, as the files declare them."""
        counts = {label: len(rows) for label, rows in self.nodes.items()}
        counts.update({rel_type: len(rows) for rel_type, rows in self.rels.items()})
        return dict(sorted(counts.items()))


def available_datasets() -> list[str]:
    """Names of the dataset directories under `data/` (a folder whose name is no IDENTIFIER cannot be loaded by name)."""
    if not config.DATA_DIR.is_dir():
        return []
    return sorted(
        p.name for p in config.DATA_DIR.iterdir() if (p / "schema.yaml").is_file() and IDENTIFIER.fullmatch(p.name)
    )


def resolve_dataset_dir(name_or_path: str | Path) -> Path:
    """A dataset name under `data/` or a path to a dataset directory."""
    candidate = Path(name_or_path)
    if candidate.is_dir() and (candidate / "schema.yaml").is_file():
        return candidate.resolve()
    named = config.DATA_DIR / str(name_or_path)
    if IDENTIFIER.fullmatch(str(name_or_path)) and named.is_dir():  # a name, never a way out of data/ (`../..`)
        return named
    valid = ", ".join(available_datasets()) or "none found"
    raise DatasetError(named, f"no such dataset (valid: {valid})")


def load_dataset(name_or_path: str | Path, split: str = TEST_SPLIT) -> Dataset:
    """Load and check a dataset directory; raise `DatasetError` on the first problem.

    `split` picks the questions: `test` (dataset.yaml's ground truth, what the study reports) or
    `dev` (`dev/questions.csv`, same columns, ids `<name>-dev-NNN`: for choosing designs, never reported).
    """
    if split not in SPLITS:
        raise DatasetError(
            Path(str(name_or_path)), f"split {str(split)[:_SHOWN_NAME]!r} is not one of {', '.join(SPLITS)}"
        )
    root = resolve_dataset_dir(name_or_path)
    _check_links(root)
    settings = _read_yaml(root / "dataset.yaml", required=False) or {}
    if not isinstance(settings, dict):
        raise DatasetError(root / "dataset.yaml", "expected a mapping of settings")
    refuse_unknown_keys(root / "dataset.yaml", "dataset.yaml", settings, SETTINGS_KEYS)
    refuse_unknown_keys(root / "dataset.yaml", "ground_truth", settings.get("ground_truth") or {}, GROUND_TRUTH_KEYS)
    name = str(settings.get("name", root.name))
    if "name" in settings:
        check_identifier(root / "dataset.yaml", "dataset name", name)
    else:
        check_identifier(root, "dataset name (the folder's; `name:` in dataset.yaml sets another)", name)
    language = str(settings.get("language", "en"))
    if language not in LANGUAGES:
        raise DatasetError(root / "dataset.yaml", f"language {language!r} is not one of {', '.join(LANGUAGES)}")
    spec = _read_schema(root / "schema.yaml")
    nodes = {label: _read_nodes(root / "nodes" / f"{label}.csv", props) for label, props in spec.nodes.items()}
    _check_no_stray_files(root / "nodes", set(spec.nodes), "label")
    keys = {label: {row.key for row in rows} for label, rows in nodes.items()}
    rels = {
        rel_type: _read_rels(root / "rels" / f"{rel_type}.csv", rel_type, rspec, keys)
        for rel_type, rspec in spec.rels.items()
    }
    _check_no_stray_files(root / "rels", set(spec.rels), "relationship type")
    gt_spec = _ground_truth_spec(root / "dataset.yaml", settings.get("ground_truth") or {})
    if split == DEV_SPLIT:
        questions = _read_ground_truth(root / DEV_QUESTIONS, gt_spec, f"{name}-{DEV_SPLIT}")
        exclusions: dict[str, str] = {}  # dataset.yaml's gold_exclusions name test-split ids
    else:
        questions = _read_ground_truth(root / gt_spec.file, gt_spec, name)
        exclusions = _gold_exclusions(root / "dataset.yaml", settings.get("gold_exclusions"), {q.id for q in questions})
    examples = _read_examples(root / "examples.yaml", {q.question.strip() for q in questions})
    conversations = read_conversations(root / (DEV_CONVERSATIONS if split == DEV_SPLIT else CONVERSATIONS_FILE))
    return Dataset(
        name=name,
        path=root,
        language=language,
        description=str(settings.get("description", "")).strip(),
        schema_spec=spec,
        ground_truth_spec=gt_spec,
        nodes=nodes,
        rels=rels,
        questions=questions,
        examples=examples,
        hash=dataset_hash(root, split),
        settings=settings,
        gold_exclusions=exclusions,
        conversations=conversations,
    )


NOT_HASHED = (CONVERSATIONS_FILE, DEV_CONVERSATIONS)
"""Files outside the dataset hash: the conversational test and development sets change no study question or answer."""


def dataset_hash(root: Path, split: str = TEST_SPLIT) -> str:
    """sha256 over every file of the dataset but NOT_HASHED (relative path + bytes): changes when an input changes.

    `dev/` counts only for the dev split: the development set changes no test question or answer,
    so adding it leaves the test split's hash (its store, caches and manifests) as it was.
    """
    digest = hashlib.sha256()
    for path in sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.relative_to(root).as_posix() not in NOT_HASHED
        and (split == DEV_SPLIT or p.relative_to(root).parts[0] != DEV_DIR)
    ):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


SETTINGS_KEYS = ("name", "language", "description", "source", "ground_truth", "gold_exclusions")
"""The keys dataset.yaml may hold (a typo such as `languag:` is refused, not read as the default)."""
GROUND_TRUTH_KEYS = ("file", "question", "cypher", "strata")


def refuse_unknown_keys(path: Path, what: str, raw: Any, allowed: tuple[str, ...]) -> None:
    """A one-line DatasetError for the first key of the mapping `raw` not in `allowed`, with a close valid one."""
    if not isinstance(raw, dict):
        return  # the reader of that part says what it expected
    for key in raw:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise DatasetError(
                path, f"{what}: unknown key {str(key)[:_SHOWN_NAME]!r} (valid: {', '.join(allowed)}){hint}"
            )


# --- schema.yaml ---------------------------------------------------------------------------


def _read_schema(path: Path) -> SchemaSpec:
    raw = _read_yaml(path, required=True)
    if not isinstance(raw, dict) or "nodes" not in raw:
        raise DatasetError(path, "expected top-level keys 'nodes' and 'relationships'")
    unknown = set(raw) - {"nodes", "relationships"}
    if unknown:
        raise DatasetError(path, f"unknown top-level key(s) {sorted(unknown)} (valid: nodes, relationships)")
    nodes: dict[str, dict[str, PropType]] = {}
    descriptions: dict[str, str] = {}
    for label, body in (raw.get("nodes") or {}).items():
        check_identifier(path, "label", label)
        body = _element_body(path, f"node {label}", body)
        nodes[str(label)] = _read_props(path, f"node {label}", body.get("properties"))
        descriptions.update(_read_descriptions(path, f"node {label}", str(label), body, nodes[str(label)]))
    rels: dict[str, RelSpec] = {}
    for rel_type, body in (raw.get("relationships") or {}).items():
        check_identifier(path, "relationship type", rel_type)
        body = _element_body(path, f"relationship {rel_type}", body)
        endpoints = []
        for pair in body.get("endpoints") or []:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise DatasetError(path, f"relationship {rel_type}: endpoint {pair!r} must be [source, target]")
            for label in pair:
                if label not in nodes:
                    raise DatasetError(
                        path, f"relationship {rel_type}: unknown label {label!r} (labels: {', '.join(sorted(nodes))})"
                    )
            endpoints.append((str(pair[0]), str(pair[1])))
        if not endpoints:
            raise DatasetError(path, f"relationship {rel_type}: no endpoints declared")
        rels[str(rel_type)] = RelSpec(
            tuple(endpoints), _read_props(path, f"relationship {rel_type}", body.get("properties"))
        )
        descriptions.update(
            _read_descriptions(path, f"relationship {rel_type}", str(rel_type), body, rels[str(rel_type)].properties)
        )
    return SchemaSpec(nodes=nodes, rels=rels, descriptions=dict(sorted(descriptions.items())))


_ELEMENT_KEYS = {"properties", "endpoints", "description", "property_descriptions"}


def _element_body(path: Path, owner: str, body: Any) -> dict[str, Any]:
    body = body or {}
    if not isinstance(body, dict):
        raise DatasetError(path, f"{owner}: expected a mapping")
    allowed = _ELEMENT_KEYS - ({"endpoints"} if owner.startswith("node") else set())
    unknown = sorted(set(map(str, body)) - allowed)
    if unknown:
        raise DatasetError(path, f"{owner}: unknown key(s) {unknown} (valid: {', '.join(sorted(allowed))})")
    return body


def _read_descriptions(
    path: Path, owner: str, name: str, body: dict[str, Any], props: dict[str, PropType]
) -> dict[str, str]:
    """`description` of the element and `property_descriptions` of its declared properties."""
    out: dict[str, str] = {}
    text = body.get("description")
    if text is not None:
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(path, f"{owner}: description must be non-empty text")
        out[name] = " ".join(text.split())
    raw = body.get("property_descriptions")
    if raw is None:
        return out
    if not isinstance(raw, dict):
        raise DatasetError(path, f"{owner}: property_descriptions must map property -> text")
    for prop, text in raw.items():
        if str(prop) not in props:
            raise DatasetError(
                path,
                f"{owner}: property_descriptions names {prop!r}, which is not a declared property "
                f"(properties: {', '.join(props) or 'none'})",
            )
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(path, f"{owner}: the description of {prop!r} must be non-empty text")
        out[f"{name}.{prop}"] = " ".join(text.split())
    return out


def _read_props(path: Path, owner: str, raw: Any) -> dict[str, PropType]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise DatasetError(path, f"{owner}: properties must be a mapping name -> type")
    props: dict[str, PropType] = {}
    for name, type_text in raw.items():
        check_identifier(path, f"{owner}: property name", name)
        if str(name).startswith("_") or name == NODE_ID_COLUMN:
            raise DatasetError(path, f"{owner}: property name {name!r} is reserved")
        try:
            props[str(name)] = PropType.parse(str(type_text))
        except ValueError as exc:
            raise DatasetError(path, f"{owner}, property {name!r}: {exc}") from None
    return props


# --- nodes and relationships ----------------------------------------------------------------


def _read_nodes(path: Path, props: dict[str, PropType]) -> list[NodeRow]:
    header, rows = _read_csv(path)
    _check_header_names(path, header)
    _require_columns(path, header, [NODE_ID_COLUMN, *props], allowed=[NODE_ID_COLUMN, *props])
    seen: dict[str, int] = {}
    out = []
    for row_no, row in rows:
        key = row[NODE_ID_COLUMN].strip()
        if not key:
            raise DatasetError(path, f"empty '{NODE_ID_COLUMN}'", row_no)
        if key in seen:
            raise DatasetError(path, f"duplicate key {key!r} (first at row {seen[key]})", row_no)
        seen[key] = row_no
        out.append(NodeRow(key, _typed_props(path, row_no, row, props)))
    return out


def _read_rels(path: Path, rel_type: str, spec: RelSpec, keys: dict[str, set[str]]) -> list[RelRow]:
    header, rows = _read_csv(path)
    _check_header_names(path, header)
    columns = [*REL_ENDPOINT_COLUMNS, *spec.properties]
    _require_columns(path, header, columns, allowed=columns)
    allowed_pairs = set(spec.endpoints)
    out = []
    for row_no, row in rows:
        ends = {c: row[c].strip() for c in REL_ENDPOINT_COLUMNS}
        for side in ("from", "to"):
            label = ends[f"{side}_label"]
            if label not in keys:
                raise DatasetError(
                    path, f"unknown label {label!r} in {side}_label (labels: {', '.join(sorted(keys))})", row_no
                )
            if ends[f"{side}_id"] not in keys[label]:
                raise DatasetError(path, f"{side}_id {ends[f'{side}_id']!r} is not a {label} node", row_no)
        pair = (ends["from_label"], ends["to_label"])
        if pair not in allowed_pairs:
            valid = ", ".join(f"({a})-[:{rel_type}]->({b})" for a, b in spec.endpoints)
            raise DatasetError(
                path,
                f"({pair[0]})-[:{rel_type}]->({pair[1]}) is not declared in schema.yaml (declared: {valid})",
                row_no,
            )
        out.append(
            RelRow(
                ends["from_label"],
                ends["from_id"],
                ends["to_label"],
                ends["to_id"],
                _typed_props(path, row_no, row, spec.properties),
            )
        )
    return out


def _typed_props(path: Path, row_no: int, row: dict[str, str], props: dict[str, PropType]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, ptype in props.items():
        text = row[name]
        if text is None or text.strip() == "":
            continue
        try:
            out[name] = parse_value(text, ptype)
        except ValueError as exc:
            raise DatasetError(path, f"column {name!r} expects {ptype.value}, got {text!r} ({exc})", row_no) from None
    return out


def parse_value(text: str, ptype: PropType) -> Any:
    """Parse one CSV cell into a Python value of the declared type (ValueError if it is not)."""
    text = text.strip()
    if ptype is PropType.STRING or ptype is PropType.DATE:
        return text
    if ptype is PropType.INTEGER:
        return int(text)
    if ptype is PropType.FLOAT:
        return float(text)
    if ptype is PropType.BOOLEAN:
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise ValueError("use true or false")
        return lowered == "true"
    items = decode_json(text)
    if not isinstance(items, list):
        raise ValueError("a list cell must be a JSON array")
    inner = {PropType.LIST_STRING: str, PropType.LIST_INTEGER: int, PropType.LIST_FLOAT: float}[ptype]
    if inner is int and not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise ValueError("list items must be integers")
    if inner is str and not all(isinstance(v, str) for v in items):
        raise ValueError("list items must be strings")
    return [inner(v) for v in items]


# --- ground truth and examples --------------------------------------------------------------


def _ground_truth_spec(path: Path, raw: dict[str, Any]) -> GroundTruthSpec:
    if not isinstance(raw, dict):
        raise DatasetError(path, "ground_truth must be a mapping")
    strata_raw = raw.get("strata") or {}
    if not isinstance(strata_raw, dict):
        raise DatasetError(path, "ground_truth.strata must map column -> list of allowed values")
    strata = {str(col): tuple(str(v) for v in (values or [])) for col, values in strata_raw.items()}
    file = str(raw.get("file", "ground_truth.csv"))
    if not _FILE_NAME.fullmatch(file):
        raise DatasetError(
            path, f"ground_truth.file {file[:_SHOWN_NAME]!r} must be a CSV file name in the dataset folder"
        )
    return GroundTruthSpec(
        file=file,
        question=str(raw.get("question", "question")),
        cypher=str(raw.get("cypher", "cypher")),
        strata=strata,
    )


def _gold_exclusions(path: Path, raw: Any, question_ids: set[str]) -> dict[str, str]:
    """`gold_exclusions` of dataset.yaml: question id -> the reason it cannot serve as ground truth."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise DatasetError(path, "gold_exclusions must map question id -> reason")
    exclusions = {}
    for qid, reason in raw.items():
        if str(qid) not in question_ids:
            raise DatasetError(path, f"gold_exclusions: no question {qid!r} in the ground truth")
        if not isinstance(reason, str) or not reason.strip():
            raise DatasetError(path, f"gold_exclusions: {qid} needs a reason")
        exclusions[str(qid)] = " ".join(reason.split())
    return exclusions


def _read_ground_truth(path: Path, spec: GroundTruthSpec, name: str) -> list[GroundTruthItem]:
    header, rows = _read_csv(path)
    _require_columns(path, header, [spec.question, spec.cypher, *spec.strata])
    items = []
    for row_no, row in rows:
        question = (row[spec.question] or "").strip()
        cypher = (row[spec.cypher] or "").strip()
        if not question:
            raise DatasetError(path, f"empty question in column {spec.question!r}", row_no)
        if not cypher:
            raise DatasetError(path, f"empty gold query in column {spec.cypher!r}", row_no)
        strata = {}
        for col, allowed in spec.strata.items():
            value = (row[col] or "").strip()
            if allowed and value not in allowed:
                raise DatasetError(path, f"{col} {value!r} is not one of: {', '.join(allowed)}", row_no)
            if not value:
                raise DatasetError(path, f"empty {col}", row_no)
            strata[col] = value
        items.append(GroundTruthItem(id=f"{name}-{row_no:03d}", question=question, cypher=cypher, strata=strata))
    if not items:
        raise DatasetError(path, "no questions")
    return items


def _read_examples(path: Path, gold_questions: set[str]) -> list[Example]:
    raw = _read_yaml(path, required=False) or []
    if not isinstance(raw, list):
        raise DatasetError(path, "expected a list of {question, cypher, reasoning}")
    out = []
    for i, entry in enumerate(raw, start=1):
        if (
            not isinstance(entry, dict)
            or not str(entry.get("question", "")).strip()
            or not str(entry.get("cypher", "")).strip()
        ):
            raise DatasetError(path, "each example needs a non-empty 'question' and 'cypher'", i)
        question = str(entry["question"]).strip()
        if question in gold_questions:
            raise DatasetError(
                path, f"example question {question!r} is also in the ground truth (examples must be held out)", i
            )
        out.append(
            Example(
                question=question,
                cypher=str(entry["cypher"]).strip(),
                reasoning=str(entry.get("reasoning", "")).strip(),
            )
        )
    return out


# --- conversations --------------------------------------------------------------------------

_DIALOGUE_KEYS = {"id", "title", "turns"}
_TURN_KEYS = {"message", "intent", "cypher", "kind"}


def read_conversations(path: Path) -> list[Dialogue]:
    """`conversations.yaml`: a list of dialogues, checked strictly (a missing file means none)."""
    raw = _read_yaml(path, required=False)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise DatasetError(path, "expected a list of dialogues {id, title, turns}")
    dialogues: list[Dialogue] = []
    seen: set[str] = set()
    for number, entry in enumerate(raw, start=1):
        if not isinstance(entry, dict):
            raise DatasetError(path, "each dialogue must be a mapping {id, title, turns}", number)
        unknown = sorted(set(map(str, entry)) - _DIALOGUE_KEYS)
        if unknown:
            raise DatasetError(
                path, f"dialogue: unknown key(s) {unknown} (valid: {', '.join(sorted(_DIALOGUE_KEYS))})", number
            )
        dialogue_id = str(entry.get("id") or "").strip()
        if not dialogue_id:
            raise DatasetError(path, "dialogue without an 'id'", number)
        if dialogue_id in seen:
            raise DatasetError(path, f"duplicate dialogue id {dialogue_id!r}", number)
        seen.add(dialogue_id)
        turns = entry.get("turns")
        if not isinstance(turns, list) or not turns:
            raise DatasetError(path, f"dialogue {dialogue_id}: 'turns' must be a non-empty list", number)
        checked = tuple(_dialogue_turn(path, dialogue_id, i, turn, number) for i, turn in enumerate(turns, start=1))
        _check_follow_ups(path, dialogue_id, checked, number)
        dialogues.append(Dialogue(dialogue_id, checked, " ".join(str(entry.get("title") or "").split())))
    return dialogues


def _dialogue_turn(path: Path, dialogue_id: str, index: int, turn: Any, row: int) -> DialogueTurn:
    where = f"dialogue {dialogue_id}, turn {index}"
    if not isinstance(turn, dict):
        raise DatasetError(path, f"{where}: expected a mapping {{message, intent, cypher}}", row)
    unknown = sorted(set(map(str, turn)) - _TURN_KEYS)
    if unknown:
        raise DatasetError(path, f"{where}: unknown key(s) {unknown} (valid: {', '.join(sorted(_TURN_KEYS))})", row)
    message = " ".join(str(turn.get("message") or "").split())
    if not message:
        raise DatasetError(path, f"{where}: empty 'message'", row)
    intent = str(turn.get("intent") or "").strip()
    if intent not in INTENTS:
        raise DatasetError(path, f"{where}: intent {intent!r} is not one of {', '.join(INTENTS)}", row)
    cypher = str(turn.get("cypher") or "").strip()
    if intent in QUERY_INTENTS and not cypher:
        raise DatasetError(path, f"{where}: a {intent} turn needs a gold 'cypher'", row)
    if intent not in QUERY_INTENTS and cypher:
        raise DatasetError(path, f"{where}: a {intent} turn has no query; remove its 'cypher'", row)
    kind = str(turn.get("kind") or "").strip()
    if kind and intent != "REQUEST_MODIFICATION":
        raise DatasetError(path, f"{where}: only a REQUEST_MODIFICATION turn has a 'kind'", row)
    if kind and kind not in FOLLOW_UP_KINDS:
        raise DatasetError(path, f"{where}: kind {kind!r} is not one of {', '.join(FOLLOW_UP_KINDS)}", row)
    return DialogueTurn(message, intent, cypher, kind)


def _check_follow_ups(path: Path, dialogue_id: str, turns: tuple[DialogueTurn, ...], row: int) -> None:
    """A modification needs an earlier query turn in its dialogue to modify."""
    queried = False
    for index, turn in enumerate(turns, start=1):
        if turn.intent == "REQUEST_MODIFICATION" and not queried:
            raise DatasetError(
                path, f"dialogue {dialogue_id}, turn {index}: REQUEST_MODIFICATION with no earlier query turn", row
            )
        queried = queried or turn.intent in QUERY_INTENTS


# --- small helpers --------------------------------------------------------------------------


def check_identifier(path: Path | str, what: str, name: Any) -> str:
    """`name` if it matches IDENTIFIER; otherwise a one-line `DatasetError` naming the file and the name."""
    if not isinstance(name, str):  # YAML reads a bare `ON:`, `YES:`, `NO:`, `OFF:` or `1:` as a boolean or a number
        raise DatasetError(
            path, f"{what} {name!r} is not text: YAML reads a bare ON, YES, NO, OFF or a number so; quote it"
        )
    text = str(name)
    if IDENTIFIER.fullmatch(text):
        return text
    shown = repr(text) if len(text) <= _SHOWN_NAME else repr(text[:_SHOWN_NAME]) + f"... ({len(text):,} characters)"
    raise DatasetError(
        path,
        f"{what} {shown} is not allowed: use letters, digits and '_', not starting with a digit ([A-Za-z_][A-Za-z0-9_]*)",
    )


def _check_links(root: Path) -> None:
    """Refuse a link inside the dataset that leads outside it: its file would be read (and its lines named) as the dataset's."""
    base = root.resolve()
    for path in sorted(root.rglob("*")):
        if path.is_symlink() and not path.resolve().is_relative_to(base):
            raise DatasetError(path, "is a link to a file outside the dataset folder; copy the file in instead")


def _check_header_names(path: Path, header: list[str]) -> None:
    """Every column of a node or relationship CSV is a property name (or a key column): an identifier."""
    for column in header:
        check_identifier(path, "column", column)


def _read_yaml(path: Path, required: bool) -> Any:
    if not path.is_file():
        if required:
            raise DatasetError(path, "file is missing")
        return None
    try:
        check_size(path)
        return parse_yaml(read_text(path), path)
    except YamlFileError as exc:
        raise DatasetError(path, exc.reason) from None


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and (row number, row) pairs; row numbers count data rows from 1."""
    if not path.is_file():
        raise DatasetError(path, "file is missing")
    with io.StringIO(read_text(path, header_lines=1), newline="") as handle:
        reader = csv.reader(handle)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise DatasetError(path, "file is empty (no header)") from None
        except csv.Error as exc:
            raise DatasetError(path, f"not valid CSV: {exc}", 0) from None
        rows = []
        try:
            for row_no, values in enumerate(reader, start=1):
                if not values or all(not v.strip() for v in values):
                    continue
                if len(values) != len(header):
                    raise DatasetError(path, f"has {len(values)} fields, the header has {len(header)}", row_no)
                rows.append((row_no, dict(zip(header, values))))
        except csv.Error as exc:
            raise DatasetError(path, f"not valid CSV: {exc}", reader.line_num) from None
    return header, rows


def read_text(path: Path, header_lines: int = 0) -> str:
    """A file's text as UTF-8, a leading byte-order mark dropped; a bad byte is named with its line and column.

    `header_lines` turns the line number into a data-row number (CSV: the header is line 1).
    """
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        row = line - header_lines if line > header_lines else None
        where = f"line {line}, byte {column} of the line (offset {exc.start})"
        raise DatasetError(
            path, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at {where}; save the file as UTF-8", row
        ) from None


def _require_columns(path: Path, header: list[str], required: list[str], allowed: list[str] | None = None) -> None:
    missing = [c for c in required if c not in header]
    if missing:
        raise DatasetError(
            path, f"missing column(s) {', '.join(repr(c) for c in missing)} (header: {', '.join(header)})"
        )
    if allowed is not None:
        extra = [c for c in header if c not in allowed]
        if extra:
            raise DatasetError(
                path, f"unknown column(s) {', '.join(repr(c) for c in extra)} (expected: {', '.join(allowed)})"
            )
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise DatasetError(path, f"duplicate column(s) {', '.join(dupes)}")


def _check_no_stray_files(folder: Path, declared: set[str], what: str) -> None:
    if not folder.is_dir():
        return
    for csv_path in sorted(folder.glob("*.csv")):
        if csv_path.stem not in declared:
            raise DatasetError(csv_path, f"{what} {csv_path.stem!r} is not declared in schema.yaml")


def _display(path: Path | str) -> str:
    path = Path(path)
    try:
        return path.resolve().relative_to(config.PROJECT_ROOT).as_posix()
    except ValueError:
        return str(path)


__all__ = [
    "DEV_QUESTIONS",
    "DEV_CONVERSATIONS",
    "FOLLOW_UP_KINDS",
    "DEV_SPLIT",
    "SPLITS",
    "TEST_SPLIT",
    "Dataset",
    "DatasetError",
    "Dialogue",
    "DialogueTurn",
    "Example",
    "GroundTruthItem",
    "GroundTruthSpec",
    "NodeRow",
    "RelRow",
    "RelSpec",
    "SchemaSpec",
    "available_datasets",
    "check_identifier",
    "dataset_hash",
    "load_dataset",
    "parse_value",
    "read_conversations",
]
