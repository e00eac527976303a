import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from builders import GIT_TEST_ENV

os.environ.update(GIT_TEST_ENV)
