"""`python -m dynsim.cli ...`: the `dynsim` command."""

from dynsim.cli import main_entry

main_entry()
