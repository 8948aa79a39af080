"""`python -m mcugen` is the `mcugen` command."""

from .cli import main

main()
