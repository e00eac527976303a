import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from builders import GIT_TEST_ENV

os.environ.update(GIT_TEST_ENV)

# The suite runs the same on a laptop and on a CI runner: tests that need CI behaviour set
# these variables themselves (audit sidecars are declined under CI).
for _ci_variable in ("CI", "GITHUB_ACTIONS"):
    os.environ.pop(_ci_variable, None)
