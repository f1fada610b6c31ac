"""i3-logic's tests import their shared kit (`i3_logic_testkit`) from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
