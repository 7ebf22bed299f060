"""Published runs: a finished run committed under `results/published/<run_id>/` and everything read from it.

Where each part lives:

| module | holds |
| --- | --- |
| `publish.py` | `t2c publish`: a run's files copied (attempt logs gzipped), its index, the replies it used; seeding admits a run's own requests only |
| `published.py` | `replies.jsonl.gz`: the response-cache rows a published run used, written and read back bounded, seeded into a cache |
| `rerun_check.py` | a rerun checked file by file against its published run (`t2c study reproduced`) |
| `replicate.py` | the counts after `make all` and the replication report of `make all FRESH=1` |
| `forecast.py` | before `make all` asks a model: how many calls the grid will make, and about how long |
| `readme_tables.py` | the README's and docs' tables between their marker comments, rendered from published runs (`t2c study tables`) |
| `loop_summary.py` | the loops side by side: one row per loop and dataset, pooled over a published run's configurations (the README's tables render it) |

This is a second job beside the study, not part of it: the study (`t2c_lib.study`) runs, scores and
compares a grid; this package copies a finished run into the repository and checks reruns against
it. Only the CLI (`t2c_lib/cli/publish.py`) imports it, so nothing that runs a study depends on it.
"""
