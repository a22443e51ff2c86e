"""python -m tests.fuzz [--long]: see run.py."""
import sys

from .run import main

sys.exit(main())
