"""The file formats every part reads and writes: bounded YAML (`yaml_file`), hostile values written as data
(`outputs`), deterministic gzip read within a limit (`gzipped`)."""
