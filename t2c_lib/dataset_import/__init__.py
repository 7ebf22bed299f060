"""`t2c dataset import`: a dataset folder from what a researcher already holds.

`graph.py` holds the graph read from a source (nodes by label, relationships by type, checked
names, inferred property types, size caps); each source has its reader: `cypher_script.py` (a
script of CREATE/MERGE statements, parsed on t2c's own lexer, never run), `neo4j_source.py` (a
running Neo4j through the driver, read-only), `csv_folder.py` (node/relationship CSVs and a small
mapping file); `pairs.py` reads question/Cypher pairs; `writer.py` writes `data/<name>/`, which
the ordinary loader (`t2c_lib.datasets.load_dataset`) then checks like any hand-made dataset.
"""
