"""A run folder's files: where each lies, how they are written to survive a kill, and the records read back.

Where each part lives:

| module | holds |
| --- | --- |
| `layout.py` | the grid's cells, their folders and the file names of a run (`GridParams`: what the grid reads of a parameter file) |
| `runlog.py` | the crash-safe attempt log (append-only JSONL, torn tails set aside) and atomic JSON |
| `summary_record.py` | a cell's `summary.json` as a declared record (`CellSummary`), written by the evaluation, read by the reports |
| `gold_screen.py` | the gold screen's report name, its drop kinds and the headline's note read back from `gold_screen.json` |

The format both sides share: the study (`t2c_lib.study`) writes these files, the reports (`t2c_lib.report`)
and the published runs (`t2c_lib.publish`) read them; this package imports neither.
"""
