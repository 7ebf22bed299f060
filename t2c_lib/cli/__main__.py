"""`python -m t2c_lib.cli ...` runs the `t2c` command."""

from t2c_lib.cli import main

main()
