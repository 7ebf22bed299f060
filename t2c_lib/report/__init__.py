"""A finished run's reports: its comparison tables, figures and failures, read from the files it wrote.

Where each part lives:

| module | holds |
| --- | --- |
| `analysis.py`, `compare.py` | a run's comparison tables (CSV, LaTeX) with paired tests; two runs side by side |
| `plots.py`, `figure_layout.py`, `figure_text.py` | the paper's figures, their labels placed without overlaps, their captions |
| `table_text.py` | how a value is written into a table: the one LaTeX escaper and the one p-value formatter |
| `citations.py` | what `CITATION.cff` cites (each run's `reference.csv`) |
| `failures.py` | a run's wrong and invalid questions for review (`t2c failures`) |

It reads a run folder through `t2c_lib.runs` and takes every number from `t2c_lib.metrics`; it never
imports the study (`t2c_lib.study`), which calls it (`study.analyze`) after a run. The paper's headline
tables stay in `study/paper_tables.py`: the published `headline.tex` files name that path.
"""
