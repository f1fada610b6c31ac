"""mini-swe-agent-plus's tests import their shared kit (`mini_swe_testkit`) from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
