"""`python -m toolgen` runs the command line."""

from toolgen.cli import main

main()
