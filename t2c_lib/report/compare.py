"""Two finished runs that differ in one setting (e.g. `decoding: free` vs `constrained`), side by side.

For every configuration and strategy the runs share, on the questions both answered:
the NO_QUERY rate of the first reply and of the final one, KG-valid (chain, final
attempt), Pass@1 (final attempt) under every scoring preset both runs were evaluated
with, mean LLM calls and completion tokens per question, and an exact McNemar test of
run B against run A per (configuration, strategy) with Holm across the table. A second
table says whether the repair loop still adds anything under each run: feedback minus
single-pass in KG-valid and Pass@1, with the loop's McNemar p (Holm within each run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from t2c_lib.errors import IncompatibleResults, InvalidValue
from t2c_lib.files.outputs import csv_frame
from t2c_lib.metrics import columns
from t2c_lib.metrics.columns import BASELINE_SIDE, TREATMENT_SIDE, col, run_suffix, side, stat
from t2c_lib.metrics.stats import holm, mcnemar_exact
from t2c_lib.report.analysis import BASELINE, TREATMENT, load_per_question, paired_frame, presets_of
from t2c_lib.runs.runlog import read_json

NO_QUERY = "NO_QUERY"
NO_QUERY_FIRST = columns.at("no_query", columns.Attempt.FIRST)
NO_QUERY_FINAL = columns.at("no_query", columns.Attempt.FINAL)
KG_VALID = columns.at("kg_valid_chain", columns.Attempt.FINAL)


@dataclass
class RunPair:
    """The two tables of a run pair, and the labels the columns carry."""

    label_a: str
    label_b: str
    per_cell: pd.DataFrame
    loop_gain: pd.DataFrame
    differences: dict[str, tuple[object, object]] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)  # label -> model id of the run
    loops: dict[str, dict[str, str]] = field(default_factory=dict)  # label -> strategy -> the loop's one name

    def write(self, out_dir: Path, stem: str) -> list[Path]:
        """`<stem>.csv`, `<stem>_loop_gain.csv` and a Markdown view of both, into `out_dir`."""
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = [out_dir / f"{stem}.csv", out_dir / f"{stem}_loop_gain.csv", out_dir / f"{stem}.md"]
        csv_frame(self.per_cell).to_csv(paths[0], index=False, float_format="%.10g", lineterminator="\n")
        csv_frame(self.loop_gain).to_csv(paths[1], index=False, float_format="%.10g", lineterminator="\n")
        paths[2].write_text(self.markdown(), encoding="utf-8")
        return paths

    @property
    def headline(self) -> str:
        """The slug of the headline scoring preset (the first one both runs were evaluated with)."""
        ours = [
            c.removesuffix(side("", self.label_a)) for c in self.per_cell.columns if c.endswith(side("", self.label_a))
        ]
        return columns.presets_in(ours)[0]

    def markdown(self) -> str:
        """The tables a reader compares: each measure as `A -> B`, with the Holm-adjusted McNemar p."""
        a, b = self.label_a, self.label_b
        headline = self.headline
        pass_col = col("pass_at_1_final", headline)
        pass_label = columns.label("pass_at_1_final", headline)
        sp, fb = BASELINE_SIDE, TREATMENT_SIDE

        def arrow(row: pd.Series, metric: str, digits: int = 3) -> str:
            return f"{row[side(metric, a)]:.{digits}f} -> {row[side(metric, b)]:.{digits}f}"

        def p_holm(row: pd.Series, metric: str) -> str:
            b_c = f"{row[stat(metric, 'mcnemar', 'b')]} / {row[stat(metric, 'mcnemar', 'c')]}"
            return f"{b_c}, {row[stat(metric, 'mcnemar', 'p_holm')]:.3g}"

        lines = [f"# {b} vs {a}", ""]
        if self.differences:
            lines += [
                "Settings that differ: "
                + "; ".join(f"`{k}`: {va!r} -> {vb!r}" for k, (va, vb) in self.differences.items()),
                "",
            ]
        lines += [
            f"Shares of the questions both runs answered, {a} -> {b}; b / c, p: exact McNemar of {b} against {a} "
            f"(b: questions {a} had and {b} lost, c: questions {b} gained; p Holm-adjusted across the table). "
            "NO_QUERY: the reply held no query.",
            "",
            f"| configuration | strategy | n | {columns.label(NO_QUERY_FIRST)} | {columns.label(NO_QUERY_FINAL)} | "
            "KG-valid chain | b / c, p | "
            f"{pass_label} | b / c, p | mean LLM calls | mean completion tokens |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for _, row in self.per_cell.iterrows():
            lines.append(
                f"| {row['configuration']} | {row['strategy']} | {row['n']} | {arrow(row, NO_QUERY_FIRST)} | "
                f"{arrow(row, NO_QUERY_FINAL)} | {arrow(row, KG_VALID)} | {p_holm(row, KG_VALID)} | "
                f"{arrow(row, pass_col)} | {p_holm(row, pass_col)} | {arrow(row, 'llm_calls', 2)} | "
                f"{arrow(row, 'completion_tokens', 1)} |"
            )
        if not self.loop_gain.empty:
            lines += [
                "",
                "What the repair loop adds in each run: feedback minus single-pass (b: right single-pass and wrong with "
                "feedback, c: the reverse; p: exact McNemar, Holm within the run).",
                "",
                f"| run | configuration | KG-valid sp -> fb | gain | b / c, p | Pass@1 ({columns.preset_name(headline)}) sp -> fb | gain | b / c, p |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for _, row in self.loop_gain.iterrows():
                lines.append(
                    f"| {row['run']} | {row['configuration']} | {row[side(KG_VALID, sp)]:.3f} -> {row[side(KG_VALID, fb)]:.3f} | "
                    f"{row[side(KG_VALID, 'gain')]:+.3f} | {p_holm(row, KG_VALID)} | "
                    f"{row[side(pass_col, sp)]:.3f} -> {row[side(pass_col, fb)]:.3f} | {row[side(pass_col, 'gain')]:+.3f} | "
                    f"{p_holm(row, pass_col)} |"
                )
        return "\n".join(lines) + "\n"


def _manifest(run: Path) -> dict:
    path = Path(run) / "manifest.json"
    return read_json(path) if path.exists() else {}


def _model_of(run: Path) -> str:
    """The model id in the run's cell signatures (`...|model:<id>|...`), or "" when the run has no manifest."""
    for signature in _manifest(run).get("cells", {}).values():
        for part in str(signature).split("|"):
            if part.startswith("model:"):
                return part[len("model:") :]
    return ""


def setting_differences(run_a: Path, run_b: Path) -> dict[str, tuple[object, object]]:
    """Parameters whose values differ between the two runs' manifests (run_id and description left out)."""
    pa, pb = _manifest(run_a).get("parameters", {}), _manifest(run_b).get("parameters", {})
    return {
        k: (pa.get(k), pb.get(k))
        for k in sorted(set(pa) | set(pb))
        if k not in ("run_id", "description") and pa.get(k) != pb.get(k)
    }


def default_labels(run_a: Path, run_b: Path) -> tuple[str, str]:
    """The values of the one setting that differs (e.g. `free`, `constrained`), else the run directories' names."""
    differences = setting_differences(run_a, run_b)
    if len(differences) == 1:
        value_a, value_b = next(iter(differences.values()))
        if isinstance(value_a, str) and isinstance(value_b, str) and value_a and value_b:
            return value_a, value_b
    names = Path(run_a).resolve().name, Path(run_b).resolve().name
    return names if names[0] != names[1] else ("A", "B")


def _rates(rows: pd.DataFrame, presets: list[str]) -> dict[str, float]:
    """One run's side of a (configuration, strategy): the NO_QUERY shares, KG-valid, Pass@1, LLM calls, tokens."""
    out = {
        NO_QUERY_FIRST: columns.column_mean(rows["first_error_type"] == NO_QUERY, NO_QUERY_FIRST),
        NO_QUERY_FINAL: columns.column_mean(rows["final_error_type"] == NO_QUERY, NO_QUERY_FINAL),
    }
    out.update(columns.column_means(rows, [KG_VALID, *columns.cols(["pass_at_1_final"], presets)]))
    out.update(columns.column_means(rows, ["llm_calls", "completion_tokens"]))
    return out


def compare_runs(run_a: Path, run_b: Path, label_a: str = "A", label_b: str = "B") -> RunPair:
    """Set run B beside run A (both `results/<run_id>/` directories with evaluated cells)."""
    if label_a == label_b:
        raise InvalidValue(f"the two runs need different labels, got {label_a!r} twice")
    a, b = load_per_question(Path(run_a)), load_per_question(Path(run_b))
    presets = [p for p in presets_of(a) if p in presets_of(b)]
    if not presets:
        raise IncompatibleResults(f"{run_a} and {run_b} share no scoring preset; evaluate both with the same t2c")
    keys = ["configuration", "mode", "question_id"]  # metrics.csv's `mode` column holds the strategy
    joined = a.merge(b, on=keys, suffixes=(run_suffix(label_a), run_suffix(label_b)))
    if joined.empty:
        raise IncompatibleResults(f"{run_a} and {run_b} have no (configuration, strategy, question) in common")
    records = []
    for (configuration, strategy), rows in joined.groupby(["configuration", "mode"], sort=True):
        row: dict[str, object] = {"configuration": configuration, "strategy": strategy, "n": len(rows)}
        for label in (label_a, label_b):
            suffix = run_suffix(label)
            ours = rows[[c for c in rows.columns if c.endswith(suffix)]]
            ours = ours.rename(columns={c: c.removesuffix(suffix) for c in ours.columns})
            row.update({side(name, label): value for name, value in _rates(ours, presets).items()})
        for metric in [KG_VALID, *columns.cols(["pass_at_1_final"], presets)]:
            test = mcnemar_exact(rows[metric + run_suffix(label_a)] > 0.5, rows[metric + run_suffix(label_b)] > 0.5)
            row[stat(metric, "mcnemar", "b")] = test.b
            row[stat(metric, "mcnemar", "c")] = test.c
            row[stat(metric, "mcnemar", "p")] = test.p_value
        records.append(row)
    per_cell = pd.DataFrame.from_records(records)
    for metric in [KG_VALID, *columns.cols(["pass_at_1_final"], presets)]:
        per_cell[stat(metric, "mcnemar", "p_holm")] = holm(per_cell[stat(metric, "mcnemar", "p")].tolist())
    return RunPair(
        label_a,
        label_b,
        per_cell,
        _loop_gain({label_a: a, label_b: b}, presets[0]),
        setting_differences(Path(run_a), Path(run_b)),
        {label_a: _model_of(Path(run_a)), label_b: _model_of(Path(run_b))},
        {label: dict(zip(f["strategy"], f["loop"])) for label, f in ((label_a, a), (label_b, b))},
    )


def _loop_gain(runs: dict[str, pd.DataFrame], preset: str) -> pd.DataFrame:
    """Feedback minus single-pass per configuration, in each run (KG-valid chain and the headline Pass@1)."""
    pass_col = col("pass_at_1_final", preset)
    records = []
    for label, frame in runs.items():
        if not {BASELINE, TREATMENT} <= set(frame["strategy"]):
            continue
        rows = []
        for configuration in sorted(frame["configuration"].unique()):
            pair = paired_frame(frame, configuration)
            if pair.empty:
                continue
            row: dict[str, object] = {"run": label, "configuration": configuration, "n": len(pair)}
            for metric in (KG_VALID, pass_col):
                sp, fb = side(metric, BASELINE_SIDE), side(metric, TREATMENT_SIDE)
                row[sp] = columns.column_mean(pair[sp], metric)
                row[fb] = columns.column_mean(pair[fb], metric)
                row[side(metric, "gain")] = columns.improvement(metric, row[sp], row[fb])
                test = mcnemar_exact(pair[sp] > 0.5, pair[fb] > 0.5)
                row[stat(metric, "mcnemar", "b")] = test.b
                row[stat(metric, "mcnemar", "c")] = test.c
                row[stat(metric, "mcnemar", "p")] = test.p_value
            rows.append(row)
        table = pd.DataFrame.from_records(rows)
        for metric in (KG_VALID, pass_col):
            table[stat(metric, "mcnemar", "p_holm")] = holm(table[stat(metric, "mcnemar", "p")].tolist())
        records.append(table)
    return pd.concat(records, ignore_index=True) if records else pd.DataFrame()
